// `kvbench merge`: the results files of sweep shards (run/sweep.h) gathered into one directory.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "run/sweep.h"

namespace kvbench {

// File name → the job its results file holds (the job's config in current form, as JSON text).
using MergedJobs = std::map<std::string, std::string>;

// Copies the results files of `inputs` (directories: their .h5 files; or files) into `out_dir`, creating it.
// The same job found twice is kept once; two different jobs under one file name throw kvbench::Error.
MergedJobs merge_results(const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& out_dir);

// Throws kvbench::Error when one of a sweep's jobs is not among the merged files (an unfinished shard).
void check_all_merged(const MergedJobs& merged, const std::vector<SweepJob>& jobs);

}  // namespace kvbench
