// `kvbench run`: one job (model × task × policy × J × h × decoding) into one HDF5 results file, resumable.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/job_support.h"
#include "cli/options.h"
#include "common/error.h"
#include "api/kvbench.h"

namespace kvbench::cli {

namespace {

struct RunCliOptions {
  JobCliOptions job;
  std::string data_root, out;
  int64_t batch = 0;
  bool force = false, quiet = false;
};

ResolvedJob job_of(const RunCliOptions& o) {
  JobConfig job = o.job.job;
  job.dtype = dtype_name(o.job.model_source().parsed_dtype());
  return api::resolve(job, o.data_root.empty() ? default_data_root() : std::filesystem::path(o.data_root));
}

void run_command(const RunCliOptions& o) {
  const api::JobRun done = api::run(job_of(o), {o.out, o.force, !o.quiet, "", o.batch});
  if (done.outcome.already_complete)
    fmt::print(stderr, "{} is complete for this job; nothing to do (pass --force to rerun)\n", done.out.string());
  if (done.outcome.held) {
    fmt::print(stderr, "{}: another kvbench process is running this job; skipped\n", done.out.string());
    return;
  }
  if (done.outcome.resumed > 0) fmt::print(stderr, "resumed: {} samples were already finished\n", done.outcome.resumed);
  std::cout << summary_line(done.out.string(), done.outcome.summary) << "\n";
}

}  // namespace

void add_batch_option(CLI::App* command, int64_t& batch) {
  command->add_option("--batch", batch,
                      "Samples decoded together (× their rollouts); a finished sample's slot takes the next one. "
                      "Results do not depend on it (bit for bit on the CPU; on CUDA packed products may round "
                      "differently); results files record it. Default: 16 on CPU, 64 on CUDA")
      ->check(CLI::Range(int64_t{0}, int64_t{4096}));
}

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run one job — model × task × policy × J × h × decoding — into an HDF5 results file (schema: results/README.md).\n"
      "Each finished sample is journalled beside the output (OUT.partial.jsonl): after a crash or kill, rerun the\n"
      "same command and it resumes. A finished output of the same job is left as it is.\n"
      "Examples:\n"
      "  kvbench run --model ../shared/models/stories260K --task rare-fact \\\n"
      "      --data rare-fact:seed=0,samples=10,words=120,facts=1 --policy counter-causal --J 64 --out results/cc.h5\n"
      "  kvbench run --model models/Qwen2.5-7B-Instruct --task math500 --policy h2o --J 512 --h 256 --limit 20\n"
      "  kvbench run --model M --task aime24 --policy tova --J 1024 --rollouts 16 --temperature 0.6 --seed 1");
  JobCliOptions& job = o->job;
  job.add_model(cmd);
  job.add(cmd, "tokenizer", false)->check(CLI::ExistingPath);
  job.add(cmd, "task", false)
      ->description(fmt::format("{}: {}", job_field("task").help, fmt::join(tasks::task_names(), ", ")))
      ->required();
  job.add(cmd, "data", false);
  cmd->add_option("--data-root", o->data_root, "Datasets root (default: $KVBENCH_DATA, else ~/.cache/kvbench/datasets, else ../shared/datasets)");
  job.add(cmd, "prompt_mode");
  job.add(cmd, "pipeline");
  job.add(cmd, "compress_questions");
  job.add_policy(cmd);
  job.add_decoding(cmd, "the task's");
  job.add(cmd, "limit");
  add_batch_option(cmd, o->batch);
  job.add(cmd, "samples", false)->description(job_field("samples").help + ", comma-separated (e.g. s0/3,s0/7)");
  job.add(cmd, "shadow", false);
  cmd->add_option("--out", o->out, "Results file (default: results/<job label>.h5)");
  cmd->add_flag("--force", o->force, "Replace an existing output or work file, even of a different job");
  cmd->add_flag("--quiet", o->quiet, "No progress bar");
  cmd->callback([o] { run_command(*o); });
}

}  // namespace kvbench::cli
