// `kvbench sweep`: a grid of jobs from a JSON config (run/sweep.h), resumable, shardable, SLURM-ready;
// `kvbench merge`: gathers the results files of sweep shards into one directory.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "cli/commands.h"
#include "cli/job_support.h"
#include "common/error.h"
#include "io/results.h"
#include "run/progress.h"
#include "run/runner.h"
#include "run/sweep.h"

namespace kvbench::cli {

namespace {

struct SweepOptions {
  std::string config, out_dir, data_root, shard = "0/1", emit_slurm;
  int64_t slurm_shards = 0;
  std::vector<std::string> sbatch;
  bool dry_run = false, force = false, quiet = false;
};

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  if (!(file << text)) fail("{}: cannot write file", path.string());
}

void emit_slurm(const SweepOptions& o, const Sweep& sweep) {
  const int64_t shards = o.slurm_shards > 0 ? o.slurm_shards : static_cast<int64_t>(sweep.jobs.size());
  const std::filesystem::path self = std::filesystem::canonical("/proc/self/exe");
  const std::filesystem::path output_dir = std::filesystem::absolute(sweep.output_dir);
  // SLURM opens each task's log (#SBATCH --output, in the output directory) before the script runs.
  std::error_code error;
  std::filesystem::create_directories(output_dir, error);
  if (error) fail("{}: cannot create the output directory ({})", output_dir.string(), error.message());
  write_text_file(o.emit_slurm, slurm_script(self, std::filesystem::absolute(o.config), output_dir, o.data_root,
                                             shards, o.sbatch));
  fmt::print(stderr, "wrote {}: {} jobs in {} array tasks; submit with `sbatch {}`\n", o.emit_slurm, sweep.jobs.size(),
             shards, o.emit_slurm);
}

// Runs the jobs in order, loading each model once while consecutive jobs share it.
void run_jobs(const SweepOptions& o, const std::vector<SweepJob>& jobs) {
  std::optional<LoadedModel> loaded;
  std::string loaded_key;
  int64_t skipped = 0, index = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& entry : jobs) {
    ++index;
    const std::string label = fmt::format("[{}/{}] {}", index, jobs.size(), entry.label);
    if (check_output(entry.out, entry.job, o.force) == OutputState::Complete) {
      ++skipped;
      fmt::print(stderr, "{}: already complete, skipped\n", label);
      continue;
    }
    const std::string key = entry.job.model + "|" + entry.job.device + "|" + entry.job.dtype;
    if (key != loaded_key) {
      loaded.reset();
      loaded.emplace(load_job_model(entry.job));
      loaded_key = key;
    }
    const RunOutcome outcome = run_job(entry.job, entry.out, loaded->model, loaded->tokenizer, {o.force, !o.quiet, label});
    if (outcome.resumed > 0)
      fmt::print(stderr, "{}: resumed, {} samples were already finished\n", label, outcome.resumed);
    std::cout << summary_line(entry.label, outcome.summary) << std::endl;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(stderr, "sweep: {} jobs ({} run, {} already complete) in {}\n", jobs.size(),
             static_cast<int64_t>(jobs.size()) - skipped, skipped, format_duration(seconds));
}

void sweep_command(const SweepOptions& o) {
  const Sweep sweep = load_sweep(o.config, o.out_dir, o.data_root.empty() ? default_data_root()
                                                                         : std::filesystem::path(o.data_root));
  if (!o.emit_slurm.empty()) return emit_slurm(o, sweep);
  const std::vector<SweepJob> jobs = shard_jobs(sweep.jobs, parse_shard(o.shard));
  if (o.dry_run) {
    for (const auto& entry : jobs) std::cout << entry.out.string() << "\n";
    return;
  }
  run_jobs(o, jobs);
}

struct MergeOptions {
  std::string out_dir;
  std::vector<std::string> inputs;
  std::string config;  // optional: check that every job of this sweep is present
};

std::vector<std::filesystem::path> results_files(const std::vector<std::string>& inputs) {
  std::vector<std::filesystem::path> files;
  for (const auto& input : inputs) {
    if (!std::filesystem::is_directory(input)) {
      files.emplace_back(input);
      continue;
    }
    for (const auto& entry : std::filesystem::directory_iterator(input))
      if (entry.path().extension() == ".h5") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Copies `from` into the merged directory (aside, then renamed), unless an identical job is there.
void merge_file(const std::filesystem::path& from, const std::filesystem::path& out_dir,
                std::map<std::string, std::string>& merged_configs) {
  const std::string name = from.filename().string();
  auto job_of = [](const std::filesystem::path& file) {  // also checks it is a results file
    return current_form(json::parse(read_run_info(file).config_json)).dump();
  };
  const std::string config = job_of(from);
  const auto seen = merged_configs.find(name);
  if (seen != merged_configs.end()) {
    if (seen->second != config) fail("{}: a different job with the same file name was already merged", from.string());
    return;  // the same job from two shards (e.g. rerun): keep one
  }
  const std::filesystem::path to = out_dir / name;
  if (std::filesystem::exists(to) && job_of(to) != config)
    fail("{} already holds a different job than {}", to.string(), from.string());
  if (!std::filesystem::exists(to) || !std::filesystem::equivalent(from, to)) {
    const std::filesystem::path aside = to.string() + ".tmp";
    std::filesystem::copy_file(from, aside, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::rename(aside, to);
  }
  merged_configs[name] = config;
}

void merge_command(const MergeOptions& o) {
  std::error_code error;
  std::filesystem::create_directories(o.out_dir, error);
  if (error) fail("{}: cannot create the output directory ({})", o.out_dir, error.message());
  std::map<std::string, std::string> merged;
  for (const auto& file : results_files(o.inputs)) merge_file(file, o.out_dir, merged);
  if (!o.config.empty()) {
    std::vector<std::string> missing;
    for (const auto& entry : load_sweep(o.config, o.out_dir, default_data_root()).jobs)
      if (!merged.count(entry.label + ".h5")) missing.push_back(entry.label);
    if (!missing.empty())
      fail("{} of the sweep's jobs are missing from the inputs, e.g. {} (unfinished shards?)", missing.size(),
           missing.front());
  }
  std::cout << fmt::format("merged {} results files into {}", merged.size(), o.out_dir) << "\n";
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
      "  kvbench sweep --config sweep.json --emit-slurm sweep.sbatch --slurm-shards 8 --sbatch '--gres=gpu:1'");
  cmd->add_option("--config", o->config, "Sweep config (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out-dir", o->out_dir, "Output directory (overrides the config's output_dir)");
  cmd->add_option("--data-root", o->data_root, "Datasets root (default: ../shared/datasets when it exists)");
  cmd->add_option("--shard", o->shard, "Run only shard i of N: jobs i, i+N, ... (0-based)")->capture_default_str();
  cmd->add_option("--emit-slurm", o->emit_slurm, "Write a SLURM job-array script (one shard per array task) and exit");
  cmd->add_option("--slurm-shards", o->slurm_shards, "Array tasks for --emit-slurm (default: one per job)");
  cmd->add_option("--sbatch", o->sbatch, "Extra #SBATCH line for --emit-slurm (repeatable), e.g. '--time=04:00:00'");
  cmd->add_flag("--dry-run", o->dry_run, "List the jobs' output files and exit");
  cmd->add_flag("--force", o->force, "Rerun and replace every job's output");
  cmd->add_flag("--quiet", o->quiet, "No progress bars");
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
  merge->add_option("--config", m->config, "Sweep config: fail when one of its jobs is missing");
  merge->callback([m] { merge_command(*m); });
}

}  // namespace kvbench::cli
