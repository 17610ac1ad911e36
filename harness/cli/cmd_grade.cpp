// `kvbench grade`: re-grade model outputs (ours or another harness's) with a task's grader.
// Input: JSONL, one output per line: `pred_raw` plus the gold fields the task keeps in Sample.record
// (e.g. `answer`). Output: the same lines plus `pred` (null when nothing was extracted), `score` and
// `pred_none` (and `details` when the grader gives any). A summary line goes to stderr.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "common/error.h"
#include "tasks/jsonl.h"
#include "tasks/task.h"

namespace kvbench::cli {

namespace {

struct GradeOptions {
  std::string task;
  std::string input;
  std::string output;  // empty = stdout
};

tasks::json graded_line(const tasks::Task& task, const tasks::JsonlLine& line) {
  const std::string output = tasks::string_field(line.value, "pred_raw", line.location);
  tasks::Sample sample;
  sample.id = line.value.contains("id") ? tasks::string_field(line.value, "id", line.location) : line.location;
  sample.record = line.value;
  tasks::Grade grade;
  try {
    grade = task.grade(sample, output);
  } catch (const std::exception& e) {  // kvbench::Error or a json type error: name the line either way
    fail("{}: {}", line.location, e.what());
  }
  tasks::json result = line.value;
  result["pred"] = grade.pred ? tasks::json(*grade.pred) : tasks::json(nullptr);
  result["score"] = grade.score;
  result["pred_none"] = !grade.pred.has_value();
  if (!grade.details.empty()) result["details"] = grade.details;
  return result;
}

void run_grade(const GradeOptions& options) {
  const auto task = tasks::make_task(options.task);
  std::string text;  // written only once every line graded, so an error leaves no partial output
  double score_sum = 0.0;
  int none = 0, n = 0;
  for (const auto& line : tasks::read_jsonl(options.input)) {
    const tasks::json result = graded_line(*task, line);
    score_sum += result["score"].get<double>();
    none += result["pred_none"].get<bool>();
    ++n;
    text += result.dump() + "\n";
  }
  if (options.output.empty()) {
    std::cout << text;
  } else {
    std::ofstream file(options.output, std::ios::binary);
    if (!(file << text)) fail("{}: cannot write file", options.output);
  }
  fmt::print(stderr, "grade {} {}: n={} mean_score={:.4f} pred_none_rate={:.4f}\n", options.task, options.input, n,
             n ? score_sum / n : 0.0, n ? static_cast<double>(none) / n : 0.0);
}

}  // namespace

void add_grade_command(CLI::App& app) {
  auto options = std::make_shared<GradeOptions>();
  auto* command = app.add_subcommand(
      "grade", "Grade model outputs in a JSONL file (pred_raw + gold fields per line) with a task's grader");
  command->add_option("--task", options->task, "Task name (e.g. math500, aime24, gpqa-diamond, rare-fact)")->required();
  command->add_option("--input", options->input, "JSONL with pred_raw and the task's gold fields")->required();
  command->add_option("--output", options->output, "Graded JSONL (default: stdout)");
  command->callback([options] { run_grade(*options); });
}

}  // namespace kvbench::cli
