#include "api/grade.h"

#include <spdlog/spdlog.h>

#include "run/profile.h"
#include "tasks/jsonl.h"
#include "tasks/task.h"

namespace kvbench::api {

namespace {

tasks::json graded_line(const tasks::Task& task, const tasks::JsonlLine& line) {
  tasks::Sample sample;
  sample.id = line.location;
  sample.record = line.value;
  const auto id = line.value.find("id");
  if (id != line.value.end() && (id->is_string() || id->is_number()))  // ids like 60 as well as "test/…"
    sample.id = tasks::string_field(line.value, "id", line.location);
  const auto output = line.value.find("pred_raw");
  tasks::Grade grade{std::nullopt, 0.0, {{"grading_error", "no string field \"pred_raw\""}}};
  if (output != line.value.end() && output->is_string())
    grade = tasks::grade_total(task, sample, output->get<std::string>(), line.location);
  else
    spdlog::warn("{}: no string field \"pred_raw\"; scored 0", line.location);
  tasks::json result = line.value;
  result["pred"] = grade.pred ? tasks::json(*grade.pred) : tasks::json(nullptr);
  result["score"] = grade.score;
  result["pred_none"] = !grade.pred.has_value();
  if (!grade.details.empty()) result["details"] = grade.details;
  return result;
}

}  // namespace

GradedFile grade_file(const std::string& task_name, const std::string& input, const std::string& profile) {
  const auto task = tasks::make_task(task_name, task_protocol(parse_profile(profile)));
  GradedFile graded;
  for (const auto& line : tasks::read_jsonl(input)) {
    const tasks::json result = graded_line(*task, line);
    graded.score_sum += result["score"].get<double>();
    graded.pred_none += result["pred_none"].get<bool>();
    ++graded.lines;
    graded.jsonl += result.dump() + "\n";
  }
  return graded;
}

}  // namespace kvbench::api
