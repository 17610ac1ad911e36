#include "api/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "api/kvbench.h"
#include "common/error.h"
#include "common/json_file.h"
#include "run/merge.h"
#include "run/profile.h"

namespace kvbench::api {

namespace {

// model.ID=PATH entries go to `paths`, FIELD=VALUE to `fields`.
void parse_sets(const SweepRequest& request, ModelPaths& paths, std::map<std::string, json>& fields) {
  for (const auto& item : request.sets) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) fail("--set {}: expected model.ID=PATH or FIELD=VALUE", item);
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key.rfind("model.", 0) == 0) {
      paths.explicit_paths[key.substr(6)] = value;
      continue;
    }
    const json parsed = json::parse(value, nullptr, false);
    fields[key] = parsed.is_discarded() ? json(value) : parsed;
  }
  if (request.limit > 0) fields["limit"] = request.limit;
}

std::filesystem::path data_root_of(const SweepRequest& request) {
  return request.data_root.empty() ? default_data_root() : request.data_root;
}

// Each job with its model resolved on this machine and the --set fields, resolved again.
void resolve_models_and_sets(SweepPlan& plan, const SweepRequest& request) {
  ModelPaths paths{request.models_dir, {}};
  std::map<std::string, json> fields;
  parse_sets(request, paths, fields);
  for (auto& entry : plan.jobs) {
    JobConfig job = with_overrides(entry.job, fields);
    job.model = resolve_model_path(entry.job.model, paths);
    plan.model_ids[job.model] = entry.job.model;
    entry.job = resolve_job(std::move(job), data_root_of(request));
  }
}

}  // namespace

SweepPlan plan_sweep(const std::filesystem::path& config, const SweepRequest& request) {
  if (const json value = read_json_file(config); !is_recipe(value)) return plan_sweep(value, config.string(), request);
  SweepPlan plan;
  plan.recipe = load_recipe(config, {request.output_dir, data_root_of(request), request.scorers_dir});
  plan.output_dir = plan.recipe->output_dir;
  for (const auto& job : plan.recipe->jobs) plan.jobs.push_back(job.entry);
  resolve_models_and_sets(plan, request);
  return plan;
}

SweepPlan plan_sweep(const json& config, const std::string& name, const SweepRequest& request) {
  Sweep sweep = expand_sweep(config, name, request.output_dir, data_root_of(request));
  SweepPlan plan{sweep.output_dir, std::move(sweep.jobs), {}, std::nullopt};
  resolve_models_and_sets(plan, request);
  return plan;
}

SweepTotals run_sweep(const std::vector<SweepJob>& jobs, const SweepRunOptions& options,
                      const std::function<void(const SweepJob&, const std::string&, const RunOutcome&)>& done) {
  std::optional<LoadedModel> loaded;
  std::string loaded_key;
  SweepTotals totals;
  totals.jobs = static_cast<int64_t>(jobs.size());
  const auto start = std::chrono::steady_clock::now();
  for (const auto& entry : jobs) {
    const std::string label = fmt::format("[{}/{}] {}", totals.run + totals.skipped + totals.held + 1, jobs.size(),
                                          entry.label);
    // The model loads when a job has work left; consecutive jobs on one model share it.
    const std::string key = entry.job.model + "|" + entry.job.device + "|" + entry.job.dtype;
    const ModelLoader load = [&]() -> ModelRef {
      if (key != loaded_key) {
        loaded.reset();
        loaded.emplace(load_job_model(entry.job));
        loaded_key = key;
      }
      return {loaded->model, *loaded->tokenizer};
    };
    const RunOutcome outcome = run_job(
        entry.job, entry.out, load, {options.force, options.progress, label, options.batch, options.after_sample});
    ++(outcome.held ? totals.held : outcome.already_complete ? totals.skipped : totals.run);
    if (done) done(entry, label, outcome);
  }
  totals.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return totals;
}

SweepShard plan_shard(const SweepPlan& plan, const std::string& shard) {
  std::vector<SweepJob> jobs = shard_jobs(plan.jobs, parse_shard(shard));
  std::vector<std::string> missing = missing_inputs(jobs, plan.model_ids);
  return {std::move(jobs), std::move(missing)};
}

std::set<std::string> differences_from_paper(const std::vector<SweepJob>& jobs) {
  std::set<std::string> differences;
  for (const SweepJob& entry : jobs)
    for (const std::string& d : kvbench::differences_from_paper(entry.job)) differences.insert(d);
  return differences;
}

namespace {

// Measures each speed_key once, loading each model once; only the jobs whose workload is countable (the
// others have no estimate to give).
std::map<std::string, Speed> benchmark(const std::vector<SweepJob>& jobs,
                                       const std::function<void(const JobConfig&, const Speed&)>& benchmarked) {
  std::map<std::string, Speed> speeds;
  std::vector<std::string> models;
  for (const auto& entry : jobs)
    if (workload_countable(entry.job) && std::find(models.begin(), models.end(), entry.job.model) == models.end())
      models.push_back(entry.job.model);
  for (const auto& model : models) {
    std::optional<LoadedModel> loaded;
    for (const auto& entry : jobs) {
      if (entry.job.model != model || speeds.count(speed_key(entry.job))) continue;
      if (!loaded) loaded.emplace(load_job_model(entry.job));
      const Speed speed = measure_speed(loaded->model, entry.job);
      speeds[speed_key(entry.job)] = speed;
      if (benchmarked) benchmarked(entry.job, speed);
    }
  }
  return speeds;
}

}  // namespace

std::vector<JobCost> estimate_costs(const std::vector<SweepJob>& jobs, bool bench,
                                    const std::function<void(const JobConfig&, const Speed&)>& benchmarked) {
  return job_costs(jobs, bench ? benchmark(jobs, benchmarked) : std::map<std::string, Speed>{});
}

int64_t write_slurm_script(const SweepPlan& plan, const SlurmRequest& request) {
  const int64_t shards = request.shards > 0 ? request.shards : static_cast<int64_t>(plan.jobs.size());
  const std::filesystem::path self = std::filesystem::canonical("/proc/self/exe");
  const std::filesystem::path output_dir = std::filesystem::absolute(plan.output_dir);
  // SLURM opens each task's log (#SBATCH --output, in the output directory) before the script runs.
  std::error_code error;
  std::filesystem::create_directories(output_dir, error);
  if (error) fail("{}: cannot create the output directory ({})", output_dir.string(), error.message());
  write_file_atomically(request.script, slurm_script(self, std::filesystem::absolute(request.config), output_dir,
                                                    request.forwarded, shards, request.sbatch));
  return shards;
}

int64_t merge(const MergeRequest& request) {
  const MergedJobs merged = merge_results(request.inputs, request.out_dir);
  if (!request.config.empty()) {
    SweepRequest names;  // only the jobs' file names matter here, not where their models or data are
    names.output_dir = request.out_dir;
    check_all_merged(merged, plan_sweep(request.config, names).jobs);
  }
  return static_cast<int64_t>(merged.size());
}

}  // namespace kvbench::api
