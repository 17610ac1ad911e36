// One gold record per grader, in the fields each task's loader stores (Sample.record): what the hostile
// grading test and the graders' fuzz target grade arbitrary outputs against.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "tasks/task.h"

namespace kvbench::testing {

inline std::vector<std::pair<std::string, tasks::json>> gold_record_per_grader() {
  return {
      {"math500", {{"answer", "\\frac{1}{2}"}}},
      {"aime24", {{"answer", "204"}}},
      {"gpqa-diamond", {{"answer", "C"}}},
      {"longhealth", {{"answer", "B"}}},
      {"rare-fact", {{"answers", {"4821"}}, {"lockers", {17}}, {"positions", {0.5}}}},
      {"qasper", {{"references", {{{"type", "extractive"}, {"answer", "the answer is five"}}}}}},
      {"locomo", {{"category", 1}, {"answer", "Paris, 7 May 2023"}}},
      {"locomo", {{"category", 5}, {"adversarial_answer", "no"}}},
      {"livecodebench", {{"question_id", "q"}, {"test_type", "stdin"}}},
  };
}

}  // namespace kvbench::testing
