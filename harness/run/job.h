// One job = model × task × policy × budget × decoding. Its JSON form is the identity of a results file:
// the same JSON means the same experiment (resume, skip), a different one must never overwrite it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/generate.h"
#include "engine/score_transforms.h"
#include "policies/policy.h"
#include "tokenizer/tokenizer.h"

namespace kvbench {

using json = nlohmann::json;

// J as the user states it: a token count, or a compression ratio as kvpress states budgets, from which each
// sample takes its own J: max(1, ⌊n · (1 − R)⌋) of its n prompt tokens (kvpress: int(n * (1 - compression_ratio))).
// Made by parse (--J, a sweep's grid) or the two constructors (the JSON's "J" and "ratio"), which reject what
// is neither; the default is unset (no budget).
class BudgetJ {
 public:
  BudgetJ() = default;
  static BudgetJ tokens(int64_t J);  // J ≥ 0 (0 = unset)
  static BudgetJ ratio(double R);    // 0 < R < 1
  // "64" or "ratio:0.5", as --J takes it.
  static BudgetJ parse(const std::string& text);

  bool is_ratio() const { return ratio_ > 0; }
  bool is_set() const { return is_ratio() || tokens_ > 0; }
  int64_t token_count() const { return tokens_; }  // 0 for a ratio budget
  double compression_ratio() const { return ratio_; }  // 0 for a token budget
  // J for a prompt of `prompt_tokens`: the token count, or the ratio's share of the prompt.
  int64_t for_prompt(int64_t prompt_tokens) const;
  std::string text() const;   // parse's input: "64", "ratio:0.5"
  std::string label() const;  // results files' names: "J64", "ratio0.5"
  std::string table_text() const;  // report columns: "J=64", "ratio=0.5", "no budget"

  bool operator==(const BudgetJ& other) const { return tokens_ == other.tokens_ && ratio_ == other.ratio_; }
  bool operator!=(const BudgetJ& other) const { return !(*this == other); }
  bool operator<(const BudgetJ& other) const;  // token budgets by J, then ratios by R

 private:
  int64_t tokens_ = 0;
  double ratio_ = 0.0;
};

// The budget as the user states it (before the policy's defaults and `auto` frozen are resolved).
struct BudgetSpec {
  BudgetJ J;
  int64_t h = 0;              // 0 = J / 4
  int64_t recent = -1;        // -1 = the policy's default (0; h2o: J/2)
  std::string frozen = "0";   // a token count, or "auto" = the system prompt's token length, subtracted from J
  int64_t min_gap = 0;
  int64_t sinks = 4;
  std::string mode = "chunked";  // or prefill_end
  // A spec (engine/allocator.h): uniform, pyramid[:ratio=R], ada[:safeguard=A]; absent from the JSON when uniform.
  std::string allocator = "uniform";
  bool rerotate_keys = false;  // KeepRule::rerotate for any policy (kvpress's KeyRerotationPress)
};

// h when the user gives none: J/4 (at least 1).
int64_t default_h(int64_t J);

// The budget for `policy` on a prompt of `prompt_tokens` (ratio budgets take their J from it), with
// `auto_frozen_tokens` standing in for frozen = auto.
CacheBudget resolve_budget(const BudgetSpec& spec, const Policy& policy, int64_t auto_frozen_tokens,
                           int64_t prompt_tokens = 0);

// Each field's name in the JSON, its meaning and when the JSON holds it: run/job_fields.h.
struct JobConfig {
  std::string model;               // model directory
  std::string tokenizer;           // a directory with tokenizer.json when not the model's (random:PRESET models)
  std::string task;
  std::string data;                // dataset path or task spec (resolved: never empty in a job)
  std::string prompt_mode = "raw"; // raw or chat
  std::string pipeline = "kvbench";  // or "kvpress": the context compressed, then the question (run/job_fields.cpp)
  bool compress_questions = false;   // kvpress: the question joins the compressed context
  std::string policy = "full";
  BudgetSpec budget;
  PhraseRules phrase;              // smooth / keep_span: how scores are ranked (engine/score_transforms.h)
  uint64_t policy_seed = 0;
  std::string scorer;              // kvpop: learned scorer file (`kvbench train-scorer`); empty = untrained fallback;
                                   // other policies drop it (resolve_job)
  int64_t max_new = 0;             // resolved from the task's defaults when 0
  double temperature = 0.0, top_p = 1.0;
  int64_t rollouts = 1;
  uint64_t seed = 0;
  int64_t limit = 0;               // 0 = all samples
  std::vector<std::string> samples;  // explicit sample ids (empty = all)
  std::string device = "cpu";
  std::string dtype = "float32";
  std::string shadow;              // "full": also decode with a full cache, teacher-forced (engine/shadow.h)
  std::string profile = "kvbench";  // or "reference": the paper's code token for token (run/profile.h)
};

// The job's JSON form, from the field table (run/job_fields.cpp).
json to_json(const JobConfig& job);

enum class Profile;  // run/profile.h

// The spec the job's policy is made from under `profile`: its own knobs, those that job fields hold for it
// (policy_seed: random's seed, scorer: kvpop's scorer file) and those the profile presets (run/profile.h),
// a knob the spec gives winning over the profile's. Throws when a field and the spec give one knob two values.
std::string policy_spec(const JobConfig& job, Profile profile);

// `job` with its policy and allocator specs in normal form (knobs at their defaults left out, canonical
// values): one experiment, one identity — the label, the results file's config, the resume key. "Default"
// is the profile's preset where it has one; a knob a job field holds stays in that field (identities
// from before it was a knob).
JobConfig with_normal_specs(JobConfig job);

// What ran, resolved: the policy's and allocator's knobs with their defaults filled in and the budget as
// the refresh sees it (h, the policy's recent window, frozen; `system_tokens` for frozen = auto).
json effective_settings(const JobConfig& job, const Policy& policy, int64_t system_tokens);
// Reads the fields of the table and old files' fields (run/job_fields.cpp); the absent ones keep their
// defaults. Throws kvbench::Error naming `where` and the field on unknown or ill-typed fields.
JobConfig job_from_json(const json& value, const std::string& where);

// A config recorded by an earlier kvbench (results file, journal) in today's form: fields it lacks (written
// before they existed) take their defaults, so old files still match the job they ran. Unreadable
// configs come back unchanged (and so match nothing).
json current_form(const json& recorded);

// Where the job's tokenizer comes from: its `tokenizer` field, else the model (a directory or a GGUF).
std::string tokenizer_source(const JobConfig& job);

// The model as labels and tables name it: its directory's name, or its GGUF file's name without ".gguf"
// (e.g. "SmolLM2-135M-Instruct.Q4_1").
std::string model_label(const std::string& model);

}  // namespace kvbench
