// A sweep: a grid of jobs from one JSON config, one results file per job under an output directory.
//
//   {
//     "output_dir": "results/table2",              (optional; --out-dir overrides it)
//     "base": {"task": "math500", "max_new": 2048},  (job fields shared by every job, see run/job.h)
//     "grid": {                                     (job fields with lists of values: the cross product)
//       "model": ["models/Qwen2.5-7B-Instruct", "models/Llama-3.1-8B-Instruct"],
//       "policy": ["full", "sliding", "h2o", "counter-causal", "counter-causal-fast"],
//       "J": [512], "h": ["J/2"], "seed": [0]
//     }
//   }
//
// Grid axes other than model, task, policy, J, h, seed and rollouts add "__field=value" to the file
// names. "h" values may be ratios of J ("J/4", "J/2", "J") for h/J ablations. Jobs are ordered by the grid's
// keys (alphabetically), the last key varying fastest; shard i of N takes jobs i, i+N, i+2N, ...
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "run/resolved_job.h"

namespace kvbench {

struct SweepJob {
  ResolvedJob job;
  std::string label;
  std::filesystem::path out;
};

struct Sweep {
  std::filesystem::path output_dir;
  std::vector<SweepJob> jobs;
};

// Throws kvbench::Error naming the file and the field on malformed configs.
Sweep load_sweep(const std::filesystem::path& config, const std::filesystem::path& output_dir_override,
                 const std::filesystem::path& data_root);

// The same from a parsed config; `file` names it in errors (recipes expand each of their parts with it).
Sweep expand_sweep(const json& config, const std::string& file, const std::filesystem::path& output_dir_override,
                   const std::filesystem::path& data_root);

struct Shard {
  int64_t index = 0, count = 1;
};
Shard parse_shard(const std::string& text);  // "i/N", 0 ≤ i < N
std::vector<SweepJob> shard_jobs(const std::vector<SweepJob>& jobs, const Shard& shard);

// A SLURM job-array script running one shard per array task (data_root: empty for the default).
std::string slurm_script(const std::filesystem::path& kvbench, const std::filesystem::path& config,
                         const std::filesystem::path& output_dir, const std::vector<std::string>& forwarded,
                         int64_t shards, const std::vector<std::string>& sbatch_lines);

}  // namespace kvbench
