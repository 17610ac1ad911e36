// `kvbench sweep`: a grid of jobs from a JSON config (run/sweep.h), resumable, shardable, SLURM-ready;
// `kvbench merge`: gathers the results files of sweep shards into one directory.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/sweep.h"
#include "cli/commands.h"
#include "cli/job_support.h"
#include "common/error.h"

namespace kvbench::cli {

namespace {

struct SweepOptions {
  std::string config, out_dir, data_root, shard = "0/1", emit_slurm, models_dir, scorers_dir = "scorers";
  int64_t slurm_shards = 0, limit = 0, batch = 0, workers = 1;
  std::vector<std::string> sbatch, set;
  bool dry_run = false, no_bench = false, force = false, quiet = false;
  bool as_worker = false;  // one of --workers' processes: no per-process skip lines, totals or progress bars
};

api::SweepRequest sweep_request(const SweepOptions& o) {
  return {o.out_dir, o.data_root, o.models_dir, o.scorers_dir, o.set, o.limit};
}

api::SweepPlan plan_sweep(const SweepOptions& o) { return api::plan_sweep(o.config, sweep_request(o)); }

// The sweep options every array task needs too, as words for the script's command line.
std::vector<std::string> forwarded_options(const SweepOptions& o) {
  std::vector<std::string> words;
  auto add = [&](const std::string& option, const std::string& value) { words.insert(words.end(), {option, value}); };
  if (!o.models_dir.empty()) add("--models-dir", std::filesystem::absolute(o.models_dir).string());
  if (!o.data_root.empty()) add("--data-root", std::filesystem::absolute(o.data_root).string());
  add("--scorers-dir", std::filesystem::absolute(o.scorers_dir).string());
  for (const auto& item : o.set) add("--set", item);
  if (o.limit > 0) add("--limit", std::to_string(o.limit));
  if (o.batch > 0) add("--batch", std::to_string(o.batch));
  return words;
}

void emit_slurm(const SweepOptions& o, const api::SweepPlan& plan) {
  const int64_t shards =
      api::write_slurm_script(plan, {o.emit_slurm, o.config, forwarded_options(o), o.sbatch, o.slurm_shards});
  fmt::print(stderr, "wrote {}: {} jobs in {} array tasks; submit with `sbatch {}`\n", o.emit_slurm, plan.jobs.size(),
             shards, o.emit_slurm);
}

// Runs the jobs in order (api::run_sweep), a line per job.
void run_jobs(const SweepOptions& o, const std::vector<SweepJob>& jobs) {
  const api::SweepTotals totals = api::run_sweep(
      jobs, {o.force, !o.quiet && !o.as_worker, o.batch},
      [&](const SweepJob& entry, const std::string& label, const RunOutcome& outcome) {
        if (outcome.held || outcome.already_complete) {  // another process ran it, or runs it now
          if (!o.as_worker)
            fmt::print(stderr, "{}: {}, skipped\n", label, outcome.held ? "held by another process" : "already complete");
          return;
        }
        if (outcome.resumed > 0)
          fmt::print(stderr, "{}: resumed, {} samples were already finished\n", label, outcome.resumed);
        std::cout << summary_line(entry.label, outcome.summary) << std::endl;
      });
  if (o.as_worker) return;  // the process that started the workers reports the sweep
  const std::string held_note = totals.held > 0 ? fmt::format(", {} held by another process", totals.held) : "";
  fmt::print(stderr, "sweep: {} jobs ({} run, {} already complete{}) in {}\n", totals.jobs, totals.run,
             totals.skipped, held_note, format_duration(totals.seconds));
}

// --workers N: N processes of this same sweep sharing its jobs (run/workers.h).
void run_workers(const SweepOptions& o, size_t jobs) {
  if (o.force) fail("--force with --workers: the workers would rerun each other's finished jobs; run with --workers 1");
  const double seconds = kvbench::run_workers(o.workers);
  fmt::print(stderr, "sweep: {} jobs in {} worker processes in {}\n", jobs, o.workers, format_duration(seconds));
}

void print_bench(const JobConfig& job, const Speed& s) {
  fmt::print("  bench {} {} J={} h={} on {}: prefill {:.0f} tok/s, decode {:.1f} tok/s, refresh {:.2f} ms\n", job.model,
             job.policy, job.budget.J.text(), job.budget.h, job.device, s.prefill_tokens_per_s, s.decode_tokens_per_s,
             s.refresh_ms);
}

// Each profile's jobs, and for kvbench's default where its jobs would run otherwise than the paper's code.
void print_profiles(const std::vector<SweepJob>& jobs) {
  std::map<std::string, int64_t> count;
  for (const SweepJob& j : jobs) ++count[j.job.profile];
  const std::set<std::string> differences = api::differences_from_paper(jobs);
  for (const auto& [profile, n] : count) fmt::print("profile {}: {} jobs\n", profile, n);
  if (!differences.empty())
    fmt::print("  kvbench's profile differs from the paper's code here in: {} (--set profile=reference reproduces "
               "it; kvbench list profiles --markdown)\n",
               fmt::join(differences, "; "));
}

void print_recipe_header(const Recipe& recipe) {
  fmt::print("recipe: {}\n  source: {}\n", recipe.title, recipe.cite);
  for (const auto& choice : recipe.choices) fmt::print("  choice: {}\n", choice);
}

void print_dry_run(const api::SweepPlan& plan, const std::vector<SweepJob>& jobs, const std::vector<std::string>& missing,
                   bool bench) {
  if (plan.recipe) print_recipe_header(*plan.recipe);
  fmt::print("{} jobs, results in {}\n", jobs.size(), plan.output_dir.string());
  print_profiles(jobs);
  if (!missing.empty()) fmt::print("missing ({}; their jobs have no counts or estimate):\n  {}\n", missing.size(),
                                   fmt::join(missing, "\n  "));
  const std::vector<JobCost> costs = api::estimate_costs(jobs, bench, print_bench);
  Workload total;
  double seconds = 0.0;
  int64_t estimated = 0;
  fmt::print("{:>8} {:>12} {:>12} {:>10} {:>12}  job\n", "samples", "prompt tok", "new tok ≤", "refreshes", "est. time");
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobCost& c = costs[i];
    if (!c.workload) {
      fmt::print("{:>8} {:>12} {:>12} {:>10} {:>12}  {}\n", "?", "?", "?", "?", "?", jobs[i].out.string());
      continue;
    }
    const Workload& w = *c.workload;
    total.samples += w.samples, total.prompt_tokens += w.prompt_tokens, total.new_tokens += w.new_tokens;
    std::string time = "?";
    if (c.speed) {
      const double s = estimated_seconds(w, *c.speed);
      seconds += s, ++estimated;
      time = format_duration(s);
    }
    fmt::print("{:>8} {:>12} {:>12} {:>10} {:>12}  {}\n", w.samples, w.prompt_tokens, w.new_tokens, w.refreshes, time,
               jobs[i].out.string());
  }
  fmt::print("total: {} samples, {} prompt tokens, at most {} new tokens; estimated {} for {} of {} jobs on this "
             "device (decode counted to max_new: an upper bound)\n",
             total.samples, total.prompt_tokens, total.new_tokens, format_duration(seconds), estimated, jobs.size());
}

void sweep_command(const SweepOptions& o) {
  const api::SweepPlan plan = plan_sweep(o);
  if (!o.emit_slurm.empty()) return emit_slurm(o, plan);
  const api::SweepShard shard = api::plan_shard(plan, o.shard);
  if (o.dry_run) return print_dry_run(plan, shard.jobs, shard.missing, !o.no_bench);
  if (!shard.missing.empty())
    fail("{} of the sweep's inputs are missing; no job was started:\n  {}", shard.missing.size(),
         fmt::join(shard.missing, "\n  "));
  if (o.workers > 1) return run_workers(o, shard.jobs.size());
  run_jobs(o, shard.jobs);
}

struct MergeOptions {
  std::string out_dir;
  std::vector<std::string> inputs;
  std::string config;  // optional: check that every job of this sweep is present
};

void merge_command(const MergeOptions& o) {
  const int64_t merged = api::merge({o.out_dir, {o.inputs.begin(), o.inputs.end()}, o.config});
  std::cout << fmt::format("merged {} results files into {}", merged, o.out_dir) << "\n";
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Run a grid of jobs from a JSON config, one results file per job (see harness/run/sweep.h for the format).\n"
      "Finished jobs are skipped and unfinished ones resume, so rerunning a sweep continues it.\n"
      "Example config:\n"
      "  {\"output_dir\": \"results/demo\",\n"
      "   \"base\": {\"model\": \"../shared/models/stories260K\", \"task\": \"rare-fact\",\n"
      "            \"data\": \"rare-fact:seed=0,samples=20,words=150,facts=1\"},\n"
      "   \"grid\": {\"policy\": [\"sliding\", \"counter-causal\"], \"J\": [32, 64, 128], \"h\": [\"J/4\"], \"seed\": [0]}}\n"
      "Examples:\n"
      "  kvbench sweep --config sweep.json\n"
      "  kvbench sweep --config sweep.json --shard 1/4            # jobs 1, 5, 9, ... of the grid\n"
      "  kvbench --threads 1 sweep --config sweep.json --workers 2  # two processes share the jobs\n"
      "  kvbench sweep --config sweep.json --emit-slurm sweep.sbatch --slurm-shards 8 --sbatch '--gres=gpu:1'\n"
      "A paper recipe (recipes/*.json, README \"Reproducing the papers\") is a sweep config with the paper's settings\n"
      "and published numbers; models are named by HF id and resolved under --models-dir:\n"
      "  kvbench sweep --config recipes/counter-causal-table2-math500.json --models-dir models --dry-run\n"
      "  kvbench sweep --config recipes/counter-causal-table2-math500.json --models-dir models\n"
      "  kvbench report --recipe recipes/counter-causal-table2-math500.json results/counter-causal/*.h5");
  cmd->add_option("--config", o->config, "Sweep config (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out-dir", o->out_dir, "Output directory (overrides the config's output_dir)");
  cmd->add_option("--data-root", o->data_root, "Datasets root (default: $KVBENCH_DATA, else ~/.cache/kvbench/datasets, else ../shared/datasets)");
  cmd->add_option("--shard", o->shard, "Run only shard i of N: jobs i, i+N, ... (0-based)")->capture_default_str();
  cmd->add_option("--emit-slurm", o->emit_slurm, "Write a SLURM job-array script (one shard per array task) and exit");
  cmd->add_option("--slurm-shards", o->slurm_shards, "Array tasks for --emit-slurm (default: one per job)");
  cmd->add_option("--sbatch", o->sbatch, "Extra #SBATCH line for --emit-slurm (repeatable), e.g. '--time=04:00:00'");
  cmd->add_option("--models-dir", o->models_dir,
                  "Directory of model checkpoints: a model named by its HF id ORG/NAME is read from DIR/NAME");
  cmd->add_option("--set", o->set,
                  "model.ID=PATH: read model ID from PATH; FIELD=VALUE: set a job field for every job, e.g.\n"
                  "max_new=64, device=cpu, dtype=float32 (not model, task, policy, J, h, seed, rollouts). Repeatable");
  cmd->add_option("--limit", o->limit, "Only the first N samples of every job (same as --set limit=N)");
  add_batch_option(cmd, o->batch);
  cmd->add_option("--scorers-dir", o->scorers_dir, "Where a recipe's kvpop scorers are (see `kvbench train-scorer`)")
      ->capture_default_str();
  cmd->add_flag("--dry-run", o->dry_run,
                "Print the jobs, their samples and tokens, what is missing, and the cost estimated from a short\n"
                "benchmark of each model and policy on this device; run nothing");
  cmd->add_flag("--no-bench", o->no_bench, "With --dry-run: skip the benchmark (no model is loaded)");
  cmd->add_flag("--force", o->force, "Rerun and replace every job's output");
  cmd->add_flag("--quiet", o->quiet, "No progress bars");
  cmd->add_option("--workers", o->workers,
                  "Processes running the sweep side by side, each taking the next job no other holds (each loads its\n"
                  "own model and uses --threads threads): for small models, --threads 1 and one worker per core.\n"
                  "Results are the same as one process's; no progress bars, a line per finished job")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--as-worker", o->as_worker)->group("");  // set by --workers on the processes it starts
  cmd->callback([o] { sweep_command(*o); });

  auto m = std::make_shared<MergeOptions>();
  CLI::App* merge = app.add_subcommand(
      "merge",
      "Gather the results files of sweep shards (directories or files) into one directory.\n"
      "The same job found twice is kept once; two different jobs with one file name are an error.\n"
      "Example:\n"
      "  kvbench merge --out results/table2 results/shard0 results/shard1 --config table2.json");
  merge->add_option("--out", m->out_dir, "Merged directory")->required();
  merge->add_option("inputs", m->inputs, "Shard directories or results files")->required();
  merge->add_option("--config", m->config, "Sweep config or recipe: fail when one of its jobs is missing");
  merge->callback([m] { merge_command(*m); });
}

}  // namespace kvbench::cli
