// `kvbench datasets list|fetch|export`: which benchmark files are present and verified under a datasets root,
// fetching them from their canonical public sources (or a mirror) with checksum verification, and writing a
// job's samples in kvpress's format.
#include <fmt/format.h>

#include <iostream>

#include "api/data.h"
#include "api/kvbench.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/error.h"

namespace kvbench::cli {

namespace {

struct DatasetsOptions {
  std::vector<std::string> names;
  std::string root, mirror;
};

void list_command(const DatasetsOptions& o) {
  const std::filesystem::path root = o.root.empty() ? default_data_root() : std::filesystem::path(o.root);
  std::cout << fmt::format("datasets root {}\n", root.string());
  for (const auto& source : dataset_sources())
    std::cout << fmt::format("  {:<16} {:<34} {}\n", source.name, to_string(dataset_status(root, source)),
                             source.file);
}

void fetch_command(const DatasetsOptions& o) {
  const std::filesystem::path root = o.root.empty() ? default_fetch_root() : std::filesystem::path(o.root);
  std::vector<const DatasetSource*> wanted;
  for (const auto& name : o.names) wanted.push_back(&dataset_source(name));  // unknown names fail before any download
  if (o.names.empty())
    for (const auto& source : dataset_sources())
      if (!source.url.empty() || !o.mirror.empty()) wanted.push_back(&source);
  for (const DatasetSource* source : wanted) {
    if (dataset_status(root, *source) == DatasetStatus::Verified) {
      std::cout << fmt::format("{}: already present and verified in {}\n", source->name, root.string());
      continue;
    }
    const std::string digest = fetch_dataset(*source, root, o.mirror);
    const std::filesystem::path file = root / source->file;
    std::cout << fmt::format("{}: {} → {}\n", source->name, to_string(dataset_status(root, *source)), file.string());
    if (source->sha256.empty())
      std::cout << fmt::format("{}: no published checksum; sha256 {} recorded in {}\n", source->name, digest,
                               recorded_digest_path(file).string());
  }
}

struct ExportOptions {
  JobCliOptions job;
  std::string data_root, out;
};

void export_command(const ExportOptions& o) {
  JobConfig job = o.job.job;
  job.policy = "full";  // the samples alone: no policy or budget takes part
  const std::filesystem::path root = o.data_root.empty() ? default_data_root() : std::filesystem::path(o.data_root);
  const int64_t rows = api::export_kvpress_rows(api::resolve(job, root), o.out);
  std::cout << fmt::format("{}: {} rows in kvpress's format\n", o.out, rows);
}

void add_export_command(CLI::App* cmd) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* e = cmd->add_subcommand(
      "export",
      "Write a job's samples as JSON lines in kvpress's dataset format (context, question, answer_prefix, answer,\n"
      "task, max_new_tokens: the rows kvpress's evaluation/evaluate.py reads), split as --pipeline kvpress splits\n"
      "them; the model's tokenizer sizes generated samples. `kvbench run --task ruler --data OUT` reads them back.\n"
      "Example:\n"
      "  kvbench datasets export --model M.gguf --task ruler --data ruler:niah_single_1,length=1536,samples=4 \\\n"
      "      --out ruler_1536.jsonl");
  e->add_option("--model", o->job.job.model, "The model whose tokenizer sizes the samples (a directory or a GGUF)")
      ->required();
  o->job.add(e, "tokenizer", false)->check(CLI::ExistingPath);
  o->job.add(e, "task", false)->required();
  o->job.add(e, "data", false);
  e->add_option("--data-root", o->data_root, "Datasets root (default: the one runs read)");
  o->job.add(e, "limit");
  o->job.add(e, "samples", false);
  o->job.add_unset(e, "max_new", "the task's");
  e->add_option("--out", o->out, "The JSON lines file to write (whole or not at all)")->required();
  e->callback([o] { export_command(*o); });
}

}  // namespace

void add_datasets_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "datasets",
      "Benchmark data: what is present and verified, and fetching it (sources and checksums: datasets/README.md).\n"
      "Runs read the root $KVBENCH_DATA, else ~/.cache/kvbench/datasets, else ../shared/datasets (development).\n"
      "Examples:\n"
      "  kvbench datasets list\n"
      "  kvbench datasets fetch math500 aime24          # into $KVBENCH_DATA or ~/.cache/kvbench/datasets\n"
      "  kvbench datasets fetch --mirror file:///data/kvbench-datasets --root /scratch/datasets");
  cmd->require_subcommand(1);
  auto o = std::make_shared<DatasetsOptions>();
  CLI::App* list = cmd->add_subcommand("list", "Each dataset's state under the root: verified, missing, mismatch");
  list->add_option("--root", o->root, "Datasets root (default: the one runs read)");
  list->callback([o] { list_command(*o); });
  CLI::App* fetch = cmd->add_subcommand(
      "fetch", "Download datasets (default: every one with a public single-file source), verify their sha256 and move\n"
               "them into the root; a failed download or a checksum mismatch leaves nothing behind");
  fetch->add_option("names", o->names, "Datasets or task names (math500, qasper, hmmt-feb-2025, ...)");
  fetch->add_option("--root", o->root, "Datasets root (default: $KVBENCH_DATA, else ~/.cache/kvbench/datasets)");
  fetch->add_option("--mirror", o->mirror,
                    "Base URL of a copy of a datasets root (https:// or file://): fetches MIRROR/<path> instead of the "
                    "canonical source; needed for the datasets built from several files (aime25, hmmt_feb_2025, gpqa_diamond)");
  fetch->callback([o] { fetch_command(*o); });
  add_export_command(cmd);
}

}  // namespace kvbench::cli
