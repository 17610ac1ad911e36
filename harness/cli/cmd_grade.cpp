// `kvbench grade`: re-grade model outputs (ours or another harness's) with a task's grader.
// Input: JSONL, one output per line: `pred_raw` plus the gold fields the task keeps in Sample.record
// (e.g. `answer`). Output: the same lines plus `pred` (null when nothing was extracted), `score` and
// `pred_none` (and `details` when the grader gives any). A summary line goes to stderr.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "common/error.h"
#include "run/profile.h"
#include "tasks/jsonl.h"
#include "tasks/task.h"

namespace kvbench::cli {

namespace {

struct GradeOptions {
  std::string task;
  std::string input;
  std::string output;  // empty = stdout
  std::string profile = "kvbench";
};

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

void run_grade(const GradeOptions& options) {
  const auto task = tasks::make_task(options.task, task_protocol(parse_profile(options.profile)));
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
  command->add_option("--profile", options->profile,
                      "reference: grade as the counter-causal paper's code does (math500: its last \\boxed{}, "
                      "math-verify's verdict)")
      ->check(CLI::IsMember(profile_names()))
      ->capture_default_str();
  command->callback([options] { run_grade(*options); });
}

}  // namespace kvbench::cli
