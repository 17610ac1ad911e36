// Sweeps as a library: plan a sweep or recipe on this machine, estimate what it costs, run it (in this process
// or in worker processes), write it out for SLURM, and merge the results of its shards. `kvbench sweep` and
// `kvbench merge` (cli/cmd_sweep.cpp) parse options into these calls; the Python module binds plan and run.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "run/cost.h"
#include "run/progress.h"
#include "run/recipe.h"
#include "run/runner.h"
#include "run/sweep.h"
#include "run/workers.h"

namespace kvbench::api {

// A sweep or recipe with its models resolved on this machine and overrides applied.
struct SweepRequest {
  std::filesystem::path output_dir;   // overrides the config's
  std::filesystem::path data_root;    // empty: default_data_root()
  std::string models_dir;             // where model ids resolve (run/recipe.h)
  std::string scorers_dir = "scorers";
  std::vector<std::string> sets;      // model.ID=PATH or FIELD=VALUE (VALUE as JSON when it parses)
  int64_t limit = 0;
};
struct SweepPlan {
  std::filesystem::path output_dir;
  std::vector<SweepJob> jobs;
  std::map<std::string, std::string> model_ids;  // resolved directory → the model as the config names it
  std::optional<Recipe> recipe;
};
SweepPlan plan_sweep(const std::filesystem::path& config, const SweepRequest& request);
// The same from a parsed sweep config (not a recipe); `name` stands for its file in errors.
SweepPlan plan_sweep(const json& config, const std::string& name, const SweepRequest& request);

// The plan's jobs of shard "i/N" (jobs i, i+N, ...), and the models, scorers and datasets they need that are
// not on this machine, one line each with how to get it.
struct SweepShard {
  std::vector<SweepJob> jobs;
  std::vector<std::string> missing;
};
SweepShard plan_shard(const SweepPlan& plan, const std::string& shard);

// The behaviours in which kvbench's default profile would run some of the jobs otherwise than the paper's code.
std::set<std::string> differences_from_paper(const std::vector<SweepJob>& jobs);

// `--dry-run`: each job's cost (run/cost.h). With `bench`, each (model, policy, J, h) is benchmarked once on
// this device, each model loaded once, and `benchmarked` hears of every measurement.
std::vector<JobCost> estimate_costs(const std::vector<SweepJob>& jobs, bool bench,
                                    const std::function<void(const JobConfig&, const Speed&)>& benchmarked = {});

// Runs the jobs in order, loading each model once while consecutive jobs share it; a complete job is skipped.
// `done` hears of every job: its outcome (held: another process runs it; already_complete: skipped).
struct SweepRunOptions {
  bool force = false;
  bool progress = true;
  int64_t batch = 0;
  std::function<void()> after_sample;  // RunOptions::after_sample
};
struct SweepTotals {
  int64_t jobs = 0, run = 0, skipped = 0, held = 0;
  double seconds = 0.0;
};
SweepTotals run_sweep(const std::vector<SweepJob>& jobs, const SweepRunOptions& options,
                      const std::function<void(const SweepJob&, const std::string& label, const RunOutcome&)>& done = {});

// `--emit-slurm`: a SLURM job-array script that runs the plan with this executable, one shard per array task,
// `forwarded` (the options every task needs) on each task's command line.
struct SlurmRequest {
  std::filesystem::path script, config;
  std::vector<std::string> forwarded, sbatch;  // sbatch: extra #SBATCH lines
  int64_t shards = 0;                          // 0: one per job
};
// Writes the script and creates the plan's output directory; returns the number of array tasks.
int64_t write_slurm_script(const SweepPlan& plan, const SlurmRequest& request);

// `kvbench merge`: the results files of sweep shards gathered into one directory (run/merge.h).
struct MergeRequest {
  std::filesystem::path out_dir;
  std::vector<std::filesystem::path> inputs;  // shard directories or results files
  std::filesystem::path config;               // optional: a sweep config or recipe whose every job must be there
};
// Returns the number of results files merged; throws kvbench::Error on conflicting or missing jobs.
int64_t merge(const MergeRequest& request);

}  // namespace kvbench::api
