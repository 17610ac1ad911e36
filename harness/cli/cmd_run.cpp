// `kvbench run`: one job (model × task × policy × J × h × decoding) into one HDF5 results file, resumable.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/job_support.h"
#include "cli/options.h"
#include "common/error.h"
#include "api/kvbench.h"

namespace kvbench::cli {

namespace {

struct RunCliOptions {
  ModelOptions model;
  PolicyCliOptions policy;
  DecodingCliOptions decoding;
  std::string tokenizer, task, data, data_root, prompt_mode = "raw", out, samples, shadow;
  int64_t limit = 0, batch = 0;
  bool force = false, quiet = false;
};

std::vector<std::string> split_ids(const std::string& text) {
  std::vector<std::string> ids;
  std::stringstream in(text);
  for (std::string id; std::getline(in, id, ',');)
    if (!id.empty()) ids.push_back(id);
  return ids;
}

ResolvedJob job_of(const RunCliOptions& o) {
  JobConfig job = o.policy.job();
  job.model = o.model.model;
  job.tokenizer = o.tokenizer;
  job.task = o.task;
  job.data = o.data;
  job.prompt_mode = o.prompt_mode;
  o.decoding.apply(job);
  job.limit = o.limit;
  job.samples = split_ids(o.samples);
  job.device = o.model.device;
  job.dtype = dtype_name(o.model.parsed_dtype());
  job.shadow = o.shadow;
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
  o->model.add_to(cmd);
  cmd->add_option("--tokenizer", o->tokenizer, job_field("tokenizer").help)->check(CLI::ExistingPath);
  cmd->add_option("--task", o->task,
                  fmt::format("{}: {}", job_field("task").help, fmt::join(tasks::task_names(), ", ")))
      ->required();
  cmd->add_option("--data", o->data, job_field("data").help);
  cmd->add_option("--data-root", o->data_root, "Datasets root (default: $KVBENCH_DATA, else ~/.cache/kvbench/datasets, else ../shared/datasets)");
  cmd->add_option("--prompt-mode", o->prompt_mode, job_field("prompt_mode").help)
      ->check(CLI::IsMember({"raw", "chat"}))
      ->capture_default_str();
  o->policy.add_to(cmd);
  o->decoding.add_to(cmd, "the task's");
  cmd->add_option("--limit", o->limit, job_field("limit").help)->capture_default_str();
  add_batch_option(cmd, o->batch);
  cmd->add_option("--samples", o->samples, job_field("samples").help + ", comma-separated (e.g. s0/3,s0/7)");
  cmd->add_option("--shadow", o->shadow, job_field("shadow").help)
      ->check(CLI::IsMember({"full"}));
  cmd->add_option("--out", o->out, "Results file (default: results/<job label>.h5)");
  cmd->add_flag("--force", o->force, "Replace an existing output or work file, even of a different job");
  cmd->add_flag("--quiet", o->quiet, "No progress bar");
  cmd->callback([o] { run_command(*o); });
}

}  // namespace kvbench::cli
