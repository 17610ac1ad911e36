#include <functional>
#include <map>

#include <spdlog/spdlog.h>

#include "common/error.h"
#include "tasks/task.h"

// The tasks, one line each in KVBENCH_TASKS: `X("name", id)` is the task that its file in tasks/ makes with
// make_<id>_task(). A list rather than self-registering objects: the text side is a static library, and its
// linker drops object files nothing refers to. KVBENCH_PROTOCOL_TASKS lists the tasks with a reference
// protocol: their make_<id>_task takes the Protocol.
#define KVBENCH_PROTOCOL_TASKS(X)         \
  X("math500", math500)                   \
  X("longhealth", longhealth)             \
  X("qasper-paper", qasper_paper)         \
  X("locomo-paper", locomo_paper)         \
  /* (one line each, ending in a backslash, before this one) */
#define KVBENCH_TASKS(X)                  \
  X("livecodebench", livecodebench)       \
  X("livecodebench-v6", livecodebench_v6) \
  X("aime24", aime24)                     \
  X("aime25", aime25)                     \
  X("hmmt-feb-2025", hmmt_feb_2025)       \
  X("hmmt-nov-2025", hmmt_nov_2025)       \
  X("gpqa-diamond", gpqa_diamond)         \
  X("rare-fact", rare_fact)               \
  X("ruler", ruler)                       \
  X("niah", niah)                         \
  X("qasper", qasper)                     \
  X("qasper-longbench", qasper_longbench) \
  X("locomo", locomo)                     \
  /* (one line each, ending in a backslash, before this one) */

namespace kvbench::tasks {

#define KVBENCH_DECLARE_TASK(name, id) std::unique_ptr<Task> make_##id##_task();
KVBENCH_TASKS(KVBENCH_DECLARE_TASK)
#undef KVBENCH_DECLARE_TASK
#define KVBENCH_DECLARE_PROTOCOL_TASK(name, id) std::unique_ptr<Task> make_##id##_task(Protocol protocol);
KVBENCH_PROTOCOL_TASKS(KVBENCH_DECLARE_PROTOCOL_TASK)
#undef KVBENCH_DECLARE_PROTOCOL_TASK

namespace {
using Factory = std::function<std::unique_ptr<Task>(Protocol)>;

const std::map<std::string, Factory>& factories() {
#define KVBENCH_TASK_ENTRY(name, id) {name, [](Protocol) { return make_##id##_task(); }},
#define KVBENCH_PROTOCOL_TASK_ENTRY(name, id) {name, make_##id##_task},
  static const std::map<std::string, Factory> table = {KVBENCH_TASKS(KVBENCH_TASK_ENTRY)
                                                           KVBENCH_PROTOCOL_TASKS(KVBENCH_PROTOCOL_TASK_ENTRY)};
#undef KVBENCH_PROTOCOL_TASK_ENTRY
#undef KVBENCH_TASK_ENTRY
  return table;
}
}  // namespace

std::unique_ptr<Task> make_task(const std::string& name, Protocol protocol) {
  auto it = factories().find(name);
  if (it == factories().end()) {
    std::string known;
    for (const auto& n : task_names()) known += (known.empty() ? "" : ", ") + n;
    fail("unknown task \"{}\" (known: {})", name, known);
  }
  return it->second(protocol);
}

Grade grade_total(const Task& task, const Sample& sample, std::string_view output, std::string_view where) {
  try {
    return task.grade(sample, output);
  } catch (const std::exception& e) {  // kvbench::Error, a json type error, a bad_alloc: the row, not the run
    spdlog::warn("{}: cannot grade ({}); scored 0", where, e.what());
    return Grade{std::nullopt, 0.0, {{"grading_error", e.what()}}};
  }
}

std::vector<std::string> reference_protocol_task_names() {
#define KVBENCH_PROTOCOL_TASK_NAME(name, id) name,
  return {KVBENCH_PROTOCOL_TASKS(KVBENCH_PROTOCOL_TASK_NAME)};
#undef KVBENCH_PROTOCOL_TASK_NAME
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

}  // namespace kvbench::tasks
