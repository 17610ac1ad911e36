// A job resolved once: the identity of what it runs (its JobConfig in normal form, the task's defaults
// filled in) and what the runner, sweeps, cost estimates and the Python module read of it, each string field
// parsed a single time: the profile, the task made with the profile's protocol, the policy's full spec, the
// label. Everything downstream of resolve_job takes a ResolvedJob and parses nothing again.
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "run/job.h"
#include "run/profile.h"
#include "tasks/task.h"

namespace kvbench {

// Its fields are the JobConfig it was resolved from; change one and resolve again (the parsed parts below
// would not follow).
class ResolvedJob : public JobConfig {
 public:
  Profile profile_kind() const { return profile_; }  // `profile`, parsed
  // The task the job runs (tasks/: one per benchmark), made with the profile's protocol.
  const tasks::Task& benchmark() const { return *task_; }
  bool chat() const { return prompt_mode == "chat"; }
  bool shadow_full() const { return shadow == "full"; }
  // A fresh instance of the job's policy, made from its spec with the knobs its fields hold and its profile
  // presets (policy_spec): one per sample, or one carried across them (runner).
  std::unique_ptr<Policy> make_policy() const;
  // "stories260K__rare-fact__tova__J32__h8__s0__r1": results/<label>.h5 by default, progress bars.
  const std::string& label() const { return label_; }

 private:
  friend ResolvedJob resolve_job(JobConfig job, const std::filesystem::path& data_root);
  ResolvedJob(JobConfig config, Profile profile, std::shared_ptr<const tasks::Task> task);

  Profile profile_;
  std::shared_ptr<const tasks::Task> task_;
  std::string policy_spec_;
  std::string label_;
};

// Fills what the user left to the task: the dataset (under `data_root`), max_new (0), temperature and
// top_p (< 0), rollouts (0); puts the policy and allocator specs in normal form; and checks every name,
// knob and bound, so a bad job fails before any model is loaded.
ResolvedJob resolve_job(JobConfig job, const std::filesystem::path& data_root);

// A file-name-safe label, e.g. "stories260K__rare-fact__tova__J32__h8__s0__r1"; each of `extra_fields`
// (job field names, e.g. a sweep's other grid axes) adds "__field=value", and so do smooth, keep_span and
// shadow when not at their defaults (labels of jobs without them stay as they were).
std::string job_label(const ResolvedJob& job, const std::vector<std::string>& extra_fields = {});

// How `job` generates with `policy` under `profile` on a prompt of `prompt_tokens` (`system_tokens` of them
// the system prompt, what frozen = auto freezes): budget, phrase rules, sampling, lengths, the shadow run and
// the profile's quirks; generation ends at `tokenizer`'s end tokens as the profile has it (none without one).
// The one place a job's fields become GenerationSettings; `generate` calls it for jobs without a task.
// The new tokens a sample may take: the job's max_new, or where that is 0 (the task's defaults give 0: RULER's
// files) the sample's own (tasks::Task::max_new_tokens).
int64_t sample_max_new(const ResolvedJob& job, const tasks::Sample& sample);

GenerationSettings generation_settings(const JobConfig& job, Profile profile, const Policy& policy,
                                       int64_t system_tokens, const Tokenizer* tokenizer, int64_t prompt_tokens = 0);
GenerationSettings generation_settings(const ResolvedJob& job, const Policy& policy, int64_t system_tokens,
                                       const Tokenizer* tokenizer, int64_t prompt_tokens = 0);

}  // namespace kvbench
