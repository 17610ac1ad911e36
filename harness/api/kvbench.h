// kvbench as a library: what a program does with it, one call each — load a model, generate with eviction,
// run a job, run a sweep (api/sweep.h), read a results file, add a policy of its own. The CLI's subcommands
// (cli/) parse options into these calls and print what they return; the Python module (python/) binds the same
// calls.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/sweep.h"
#include "engine/generate.h"
#include "io/results.h"
#include "model/model.h"
#include "policies/policy.h"
#include "report/tables.h"
#include "run/job.h"
#include "run/job_fields.h"
#include "run/runner.h"
#include "tokenizer/tokenizer.h"

namespace kvbench::api {

// A model: an HF directory (config.json + safetensors, and tokenizer.json for text), a GGUF file (or a
// directory holding one: its tokenizer.ggml.* metadata is the tokenizer), or "random:PRESET"
// (random weights, model/random_model.h), on "cpu", "cuda" or "cuda:N"; dtype float32, bfloat16 or float16,
// empty = float32 on the CPU and bfloat16 on CUDA.
struct ModelSource {
  std::string model;
  std::string device = "cpu";
  std::string dtype;

  at::Device parsed_device() const;
  at::ScalarType parsed_dtype() const;
};

struct LoadedModel {
  Model model;
  std::optional<Tokenizer> tokenizer;  // absent when the directory has no tokenizer.json (random models)
};

LoadedModel load_model(const ModelSource& source);
// A job's model; throws kvbench::Error when it has no tokenizer.json (tasks need text).
LoadedModel load_job_model(const JobConfig& job);

// A policy usable by name everywhere (generate, run, sweep, recipes) once registered; `factory` gets the
// spec's knobs in PolicyOptions::knobs and must read every one (make_policy refuses the rest).
using PolicyFactory = std::function<std::unique_ptr<Policy>(const PolicyOptions&)>;
void register_policy(const std::string& name, PolicyFactory factory);

// One prompt: text (raw, or through the chat template) or token ids.
struct PromptInput {
  std::string text;
  std::vector<int64_t> ids;  // used when text is empty
  std::string system;        // raw: prepended with a blank line; chat: the system turn
  bool chat = false;
  bool thinking = true;      // chat: Qwen3's enable_thinking
};

struct GenerateRequest {
  PromptInput prompt;
  // The policy spec, budget, phrase rules, sampling (temperature, top_p, seed), max_new, rollouts, shadow and
  // profile, as a job has them; model, task and data are not read. Unset decoding (max_new or rollouts 0,
  // temperature or top_p < 0): 256 new tokens, greedy, top-p 1, one rollout.
  JobConfig job;
  int64_t top_k = 0;
  std::vector<std::string> stop;  // stop strings (need a tokenizer)
};

struct Generation {
  std::string policy;  // its spec in normal form, as a job names it (a caller's own policy: its spec())
  GenerationSettings settings;
  GenerationResult result;
  std::vector<std::string> texts;  // per rollout (empty strings without a tokenizer)
};

// `policy`: the policy to run (a caller's own object); null = made from request.job.policy.
Generation generate(const LoadedModel& model, const GenerateRequest& request, Policy* policy = nullptr);
// `kvbench generate --format json`: ids, text, settings, timing, and every refresh of rollout 0.
json generation_json(const Generation& generation);

// A job from its fields (JobConfig, or its JSON as results files and job files hold it, `where` naming it in
// errors), resolved once (run/resolved_job.h): the task's defaults filled in under `data_root`, specs in
// normal form, every name, knob and bound checked. What run, sweeps and cost estimates take.
ResolvedJob resolve(const JobConfig& job, const std::filesystem::path& data_root);
ResolvedJob resolve(const json& job, const std::string& where, const std::filesystem::path& data_root);

// One job into one results file (default results/<label>.h5), resumable: a complete file of the same job is
// left as it is (and its model is not loaded). `model` may be given to reuse a loaded one.
struct RunRequest {
  std::filesystem::path out;  // empty: results/<job label>.h5
  bool force = false;
  bool progress = true;
  std::string label;          // progress-bar label (default: the job label)
  int64_t batch = 0;          // samples decoded together; 0 = default_batch
  std::function<void()> after_sample;  // RunOptions::after_sample
};
struct JobRun {
  std::filesystem::path out;
  RunOutcome outcome;
};
JobRun run(const ResolvedJob& job, const RunRequest& request, const LoadedModel* model = nullptr);

// `kvbench report`'s tables (overview, policies, aime, accuracy-vs-j, key-retention, by-retention, latency,
// paired, overlap, overlap-refreshes, fidelity, attention-loss) of the results files that pass `filter`.
std::vector<std::string> report_table_names();
std::vector<Table> report_tables(const std::vector<std::filesystem::path>& files, const std::vector<std::string>& names,
                                 const TableFilter& filter = {});

}  // namespace kvbench::api
