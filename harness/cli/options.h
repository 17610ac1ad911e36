// Option groups shared by the subcommands that load a model and run a policy.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "api/kvbench.h"

namespace kvbench::cli {

struct ModelOptions {
  std::string model;
  std::string device = "cpu";
  std::string dtype;  // empty: float32 on CPU, bfloat16 on CUDA

  void add_to(CLI::App* command);
  api::ModelSource source() const { return {model, device, dtype}; }
  at::Device parsed_device() const;
  at::ScalarType parsed_dtype() const;
  Model load() const;  // also accepts random:PRESET (see model/random_model.h)
};

struct PolicyCliOptions {
  std::string policy = "full";
  std::string J = "0";     // a token count (0 = unset) or ratio:R
  int64_t h = 0;           // 0 = J / 4
  int64_t recent = -1;     // -1 = the policy's default (0; h2o: J/2)
  std::string frozen = "0";  // a number, or "auto" (= the system prompt's token length, subtracted from J)
  int64_t min_gap = 0;
  int64_t sinks = 4;
  std::string mode = "chunked";
  std::string allocator = "uniform";  // a spec: pyramid:ratio=3
  uint64_t seed = 0;
  std::string scorer;      // kvpop: learned scorer file
  int64_t smooth = 1, keep_span = 1;  // phrase rules (engine/score_transforms.h)
  std::string profile = "kvbench";     // run/profile.h

  void add_to(CLI::App* command);
  BudgetSpec spec() const;
  // A job of these options' fields (policy, budget, phrase rules, seed, scorer), the rest at their defaults.
  JobConfig job() const;
  PhraseRules phrase() const { return {smooth, keep_span}; }
};

// Decoding: length, sampling and rollouts, the same flags for `generate` and `run`. Unset values (0, or -1 for
// temperature and top_p) are filled by the command: the task's defaults for a run, `generate`'s own for a prompt.
struct DecodingCliOptions {
  int64_t max_new = 0, rollouts = 0;
  double temperature = -1.0, top_p = -1.0;
  uint64_t seed = 0;

  // `unset`: what an unset value means, as help text ("the task's", "256 new tokens, greedy, 1 rollout").
  void add_to(CLI::App* command, const std::string& unset);
  void apply(JobConfig& job) const;
};

}  // namespace kvbench::cli
