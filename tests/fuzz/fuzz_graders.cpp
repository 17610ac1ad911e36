// Every task's grader on any output: a score in [0, 1], never a crash or an escaping exception.
#include <cstdlib>
#include <memory>
#include <vector>

#include "fuzz_support.h"
#include "tasks/task.h"

using namespace kvbench;

namespace {

struct Graded {
  std::unique_ptr<tasks::Task> task;
  tasks::Sample sample;
};

std::vector<Graded> graded_tasks() {
  const std::vector<std::pair<std::string, tasks::json>> golds = {
      {"math500", {{"answer", "\\frac{1}{2}"}}},
      {"aime24", {{"answer", "204"}}},
      {"gpqa-diamond", {{"answer", "C"}}},
      {"longhealth", {{"answer", "B"}}},
      {"rare-fact", {{"answers", {"4821"}}, {"lockers", {17}}, {"positions", {0.5}}}},
      {"qasper", {{"references", {{{"type", "extractive"}, {"answer", "the answer is five"}}}}}},
      {"locomo", {{"category", 1}, {"answer", "Paris, Rome"}}},
      {"locomo", {{"category", 5}, {"adversarial_answer", "no"}}},
  };
  std::vector<Graded> out;
  for (const auto& [name, gold] : golds) {
    tasks::Sample sample;
    sample.id = "fuzz";
    sample.record = gold;
    out.push_back({tasks::make_task(name), sample});
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<Graded> graded = graded_tasks();
  const std::string_view output = fuzz::text(data, size);
  for (const auto& g : graded) {
    const tasks::Grade grade = g.task->grade(g.sample, output);
    if (!(grade.score >= 0.0 && grade.score <= 1.0)) std::abort();
  }
  return 0;
}
