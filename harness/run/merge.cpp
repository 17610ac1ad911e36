#include "run/merge.h"

#include <algorithm>

#include "common/error.h"
#include "common/json_file.h"
#include "io/results.h"

namespace kvbench {

namespace {

std::vector<std::filesystem::path> results_files(const std::vector<std::filesystem::path>& inputs) {
  std::vector<std::filesystem::path> files;
  for (const auto& input : inputs) {
    if (!std::filesystem::is_directory(input)) {
      files.push_back(input);
      continue;
    }
    for (const auto& entry : std::filesystem::directory_iterator(input))
      if (entry.path().extension() == ".h5") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Copies `from` into the merged directory (aside, then renamed), unless an identical job is there.
void merge_file(const std::filesystem::path& from, const std::filesystem::path& out_dir, MergedJobs& merged) {
  const std::string name = from.filename().string();
  auto job_of = [](const std::filesystem::path& file) {  // also checks it is a results file
    return current_form(json::parse(read_run_info(file).config_json)).dump();
  };
  const std::string config = job_of(from);
  const auto seen = merged.find(name);
  if (seen != merged.end()) {
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
  merged[name] = config;
}

}  // namespace

MergedJobs merge_results(const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& out_dir) {
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) fail("{}: cannot create the output directory ({})", out_dir.string(), error.message());
  MergedJobs merged;
  for (const auto& file : results_files(inputs)) merge_file(file, out_dir, merged);
  return merged;
}

void check_all_merged(const MergedJobs& merged, const std::vector<SweepJob>& jobs) {
  std::vector<std::string> missing;
  for (const auto& entry : jobs)
    if (!merged.count(entry.label + ".h5")) missing.push_back(entry.label);
  if (!missing.empty())
    fail("{} of the sweep's jobs are missing from the inputs, e.g. {} (unfinished shards?)", missing.size(),
         missing.front());
}

}  // namespace kvbench
