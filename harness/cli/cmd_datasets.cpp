// `kvbench datasets list|fetch`: which benchmark files are present and verified under a datasets root,
// and fetching them from their canonical public sources (or a mirror) with checksum verification.
#include <fmt/format.h>

#include <iostream>

#include "api/data.h"
#include "api/kvbench.h"
#include "cli/commands.h"
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
}

}  // namespace kvbench::cli
