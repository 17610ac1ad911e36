// Every task's grader on any output: a score in [0, 1], never a crash or an escaping exception.
#include <cstdlib>
#include <memory>
#include <vector>

#include "fuzz_support.h"
#include "tasks/task.h"
#include "tests/gold_records.h"

using namespace kvbench;

namespace {

struct Graded {
  std::unique_ptr<tasks::Task> task;
  tasks::Sample sample;
};

std::vector<Graded> graded_tasks() {
  std::vector<Graded> out;
  for (const auto& [name, gold] : testing::gold_record_per_grader()) {
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
