// What a sweep will cost before it runs (`kvbench sweep --dry-run`): each job's workload (samples,
// prompt tokens, at most max_new tokens per rollout, refreshes) and, from a short benchmark of the
// job's model and policy on this device, the time it takes. An upper bound in decode tokens (every
// rollout is counted as running to max_new) and an estimate otherwise: the benchmark's context
// (J + h tokens, or 512 without a budget) stands for every sample's.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "run/job.h"
#include "run/sweep.h"
#include "tokenizer/tokenizer.h"

namespace kvbench {

struct Workload {
  int64_t samples = 0;
  int64_t prompt_tokens = 0;   // over all samples
  int64_t new_tokens = 0;      // at most: samples × rollouts × max_new
  int64_t refreshes = 0;       // expected: one per h tokens processed, per sample (evicting policies)
};

// Each sample the job runs: its prompt's token length and its task's own limit on new tokens (tokenizing is the
// slow part: jobs that differ only in policy, budget or max_new share these).
struct SampleSize {
  int64_t prompt = 0, own_max_new = 0;
};
std::vector<SampleSize> sample_sizes(const ResolvedJob& job, const Tokenizer& tokenizer);
Workload job_workload(const ResolvedJob& job, const std::vector<SampleSize>& samples);

struct Speed {
  double prefill_tokens_per_s = 0.0, decode_tokens_per_s = 0.0;
  double refresh_ms = 0.0;     // mean scoring time of a refresh at n = J + h; 0 when nothing is evicted
};

// A short run of the job's policy on random tokens (prompt J + h, 8 new tokens) on the job's device.
Speed measure_speed(const Model& model, const ResolvedJob& job);

double estimated_seconds(const Workload& workload, const Speed& speed);

// Jobs with one key (model, device, dtype, policy, budget) run at one speed: one benchmark serves them all.
std::string speed_key(const JobConfig& job);

// Whether the job's workload can be counted here: its tokenizer and its task's data are on this machine.
bool workload_countable(const ResolvedJob& job);

// A job's cost as far as this machine knows it: its workload where countable, its speed where benchmarked.
struct JobCost {
  std::optional<Workload> workload;
  std::optional<Speed> speed;
};
// Per job; `speeds` by speed_key (empty: no estimates).
std::vector<JobCost> job_costs(const std::vector<SweepJob>& jobs, const std::map<std::string, Speed>& speeds);

}  // namespace kvbench
