// The crash-safe work file of a run: JSON lines beside the output (OUT.partial.jsonl). Line 1 is the
// header (the job config and the start time), every further line one finished sample (its rows and
// refresh traces), written with a single write() and fsync'd. After kill -9 at any moment the file holds
// the header and whole samples, possibly followed by one torn line, which reopening cuts off — so a
// rerun neither loses a finished sample nor repeats one.
#pragma once
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/results.h"

namespace kvbench {

struct SampleResults {
  std::vector<ResultRow> rows;           // one per rollout
  std::vector<RefreshTrace> refreshes;   // trace.row = the rollout
};

class Journal {
 public:
  // Creates the journal, or reopens one written for the same config. A journal of a different config is
  // an error unless `force` (then it is discarded). The caller holds the job's lock (run/job_lock.h):
  // two processes appending to one job would duplicate samples.
  static Journal open(const std::filesystem::path& path, const json& config, bool force);
  Journal(Journal&&) noexcept;
  ~Journal();

  const std::map<std::string, SampleResults>& finished() const { return finished_; }
  const std::string& start_time() const { return start_time_; }
  void append(const SampleResults& sample);  // durable when it returns
  void remove();                             // after the final file is in place

 private:
  Journal(std::filesystem::path path, int fd, std::string start_time, std::map<std::string, SampleResults> finished);
  std::filesystem::path path_;
  int fd_ = -1;
  std::string start_time_;
  std::map<std::string, SampleResults> finished_;
};

// "2026-11-29T16:53:12Z"
std::string utc_timestamp();

}  // namespace kvbench
