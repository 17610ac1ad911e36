// `kvbench grade`: a task's extraction and scoring over model outputs already written (JSONL lines with a
// "pred_raw" string), without running a model.
#pragma once
#include <string>

namespace kvbench::api {

struct GradedFile {
  std::string jsonl;  // each input line with pred, score, pred_none (and details) added
  int64_t lines = 0, pred_none = 0;
  double score_sum = 0.0;
};

// Every line of `input` graded by `task` as `profile` grades it (run/profile.h); throws kvbench::Error
// naming the file and line on malformed input. A line without "pred_raw" scores 0, with a warning.
GradedFile grade_file(const std::string& task, const std::string& input, const std::string& profile);

}  // namespace kvbench::api
