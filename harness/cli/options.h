// The options that set a job's fields, shared by the subcommands that load a model and run a policy.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "api/kvbench.h"

namespace kvbench::cli {

// A command's job, written by its options. `job` is the starting point: a field whose option is not given
// keeps its value there. Each option is made from its field's row in the job table (run/job_fields.h) —
// its name (--min-gap for min_gap), type, help and choices — so a new field is one row and one `add`.
struct JobCliOptions {
  JobConfig job;

  // The option of `field`, showing the job's value as its default unless the field's help says what its
  // default means (h = 0: J/4); the caller may add checks or help.
  CLI::Option* add(CLI::App* command, const std::string& field, bool show_default = true);
  // The same for a field whose unset value (0, or -1) the command fills: `unset` says with what.
  CLI::Option* add_unset(CLI::App* command, const std::string& field, const std::string& unset);

  // --model (required: an HF directory, a GGUF or random:PRESET), --device, --dtype (unset: per device).
  void add_model(CLI::App* command);
  // --policy, the budget (--J … --allocator), phrase rules, --profile, --policy-seed, --scorer.
  void add_policy(CLI::App* command);
  // --max-new, --temperature, --top-p, --rollouts (unset: `unset`, e.g. "the task's"), --seed.
  void add_decoding(CLI::App* command, const std::string& unset);

  api::ModelSource model_source() const { return {job.model, job.device, job.dtype}; }
};

}  // namespace kvbench::cli
