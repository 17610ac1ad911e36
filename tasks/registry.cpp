#include <functional>
#include <map>

#include "common/error.h"
#include "tasks/task.h"

namespace kvbench::tasks {

namespace {
using Factory = std::function<std::unique_ptr<Task>()>;

// Each task file defines its factory; add one line here per task.
const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
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

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

}  // namespace kvbench::tasks
