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
  std::string name;                // e.g. "math500" (its directory under the root, or that + a split)
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

// Unverified: no published checksum (matching the digest recorded at fetch time, if any).
enum class DatasetStatus { Missing, Verified, Unverified, Corrupt };
DatasetStatus dataset_status(const std::filesystem::path& root, const DatasetSource& source);
std::string to_string(DatasetStatus status);

// Where `datasets fetch` records the sha256 it saw for a file without a published checksum
// ("<file>.sha256", sha256sum's format), so later changes to the file show as a mismatch.
std::filesystem::path recorded_digest_path(const std::filesystem::path& file);

// Downloads `source` into `root` (from `mirror` + "/" + file when a mirror URL is given, e.g.
// file:///data/kvbench-datasets), checks the sha256 (or records it, when none is published) and renames
// it into place; returns the file's sha256. Throws kvbench::Error naming the URL on download errors and
// checksum mismatches; nothing is left at the destination then.
std::string fetch_dataset(const DatasetSource& source, const std::filesystem::path& root, const std::string& mirror);

}  // namespace kvbench
