#include <functional>
#include <map>

#include <spdlog/spdlog.h>

#include "common/error.h"
#include "tasks/task.h"

namespace kvbench::tasks {

// Factories defined in the task files.
std::unique_ptr<Task> make_livecodebench_task();
std::unique_ptr<Task> make_livecodebench_v6_task();
std::unique_ptr<Task> make_math500_task();
std::unique_ptr<Task> make_aime24_task();
std::unique_ptr<Task> make_aime25_task();
std::unique_ptr<Task> make_hmmt_feb_2025_task();
std::unique_ptr<Task> make_hmmt_nov_2025_task();
std::unique_ptr<Task> make_gpqa_diamond_task();
std::unique_ptr<Task> make_longhealth_task();
std::unique_ptr<Task> make_rare_fact_task();
std::unique_ptr<Task> make_qasper_task();
std::unique_ptr<Task> make_qasper_longbench_task();
std::unique_ptr<Task> make_qasper_paper_task();
std::unique_ptr<Task> make_locomo_task();
std::unique_ptr<Task> make_locomo_paper_task();

namespace {
using Factory = std::function<std::unique_ptr<Task>()>;

// Each task file defines its factory; add one line here per task.
const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"livecodebench", make_livecodebench_task},
      {"livecodebench-v6", make_livecodebench_v6_task},
      {"math500", make_math500_task},
      {"aime24", make_aime24_task},
      {"aime25", make_aime25_task},
      {"hmmt-feb-2025", make_hmmt_feb_2025_task},
      {"hmmt-nov-2025", make_hmmt_nov_2025_task},
      {"gpqa-diamond", make_gpqa_diamond_task},
      {"longhealth", make_longhealth_task},
      {"rare-fact", make_rare_fact_task},
      {"qasper", make_qasper_task},
      {"qasper-longbench", make_qasper_longbench_task},
      {"qasper-paper", make_qasper_paper_task},
      {"locomo", make_locomo_task},
      {"locomo-paper", make_locomo_paper_task},
  };
  return table;
}
}  // namespace

std::unique_ptr<Task> make_task(const std::string& name) {
  auto it = factories().find(name);
  if (it == factories().end()) {
    std::string known;
    for (const auto& n : task_names()) known += (known.empty() ? "" : ", ") + n;
    fail("unknown task \"{}\" (known: {})", name, known);
  }
  return it->second();
}

Grade grade_total(const Task& task, const Sample& sample, std::string_view output, std::string_view where) {
  try {
    return task.grade(sample, output);
  } catch (const std::exception& e) {  // kvbench::Error, a json type error, a bad_alloc: the row, not the run
    spdlog::warn("{}: cannot grade ({}); scored 0", where, e.what());
    return Grade{std::nullopt, 0.0, {{"grading_error", e.what()}}};
  }
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

}  // namespace kvbench::tasks
