// Where each benchmark's data comes from and how to get it onto this machine (`kvbench datasets`):
// the canonical public source (datasets/README.md), the sha256 of the file a task reads, and a
// fetcher that downloads (libcurl: https or file:// mirrors), verifies and moves the file into a
// datasets root, never leaving a half-written or unverified file at the path a task reads.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace kvbench {

struct DatasetSource {
  std::string name;                // directory under the root, e.g. "math500"
  std::vector<std::string> tasks;  // tasks reading it
  std::string file;                // path under the root (a task's default_dataset())
  std::string sha256;              // of `file`; empty: no published checksum
  std::string url;                 // canonical source; empty: built from several files, mirror only
  std::string archive_sha256;      // when `url` is a .tgz: its checksum ...
  std::string member;              // ... and the member that becomes `file`
  std::string note;                // how to obtain it otherwise, licence caveats
};

const std::vector<DatasetSource>& dataset_sources();
// By directory name or task name; kvbench::Error listing the known names otherwise.
const DatasetSource& dataset_source(const std::string& name);

// Where `datasets fetch` writes by default: $KVBENCH_DATA, else ~/.cache/kvbench/datasets.
std::filesystem::path default_fetch_root();

std::string sha256_of_file(const std::filesystem::path& file);

enum class DatasetStatus { Missing, Verified, Unverified, Corrupt };  // Unverified: no checksum known
DatasetStatus dataset_status(const std::filesystem::path& root, const DatasetSource& source);
std::string to_string(DatasetStatus status);

// Downloads `source` into `root` (from `mirror` + "/" + file when a mirror URL is given, e.g.
// file:///data/kvbench-datasets), checks the sha256 and renames it into place. Throws kvbench::Error
// naming the URL on download errors and checksum mismatches; nothing is left at the destination then.
void fetch_dataset(const DatasetSource& source, const std::filesystem::path& root, const std::string& mirror);

}  // namespace kvbench
