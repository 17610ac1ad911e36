// Dataset files (any bytes) through each task's loader; the first byte picks the task.
#include <memory>
#include <vector>

#include "fuzz_support.h"
#include "tasks/task.h"

using namespace kvbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> names = {"math500", "aime24", "hmmt-feb-2025", "qasper", "qasper-longbench",
                                                 "locomo", "longhealth", "livecodebench"};
  if (size == 0) return 0;
  const std::string& name = names[data[0] % names.size()];
  const auto path = fuzz::write_scratch("dataset", fuzz::text(data + 1, size - 1));
  fuzz::expect_clean([&] {
    const auto task = tasks::make_task(name);
    for (const tasks::Sample& sample : task->load(path)) (void)task->prompt(sample);
  });
  return 0;
}
