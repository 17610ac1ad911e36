// `kvbench grade`: re-grade model outputs (ours or another harness's) with a task's grader.
// Input: JSONL, one output per line: `pred_raw` plus the gold fields the task keeps in Sample.record
// (e.g. `answer`). Output: the same lines plus `pred` (null when nothing was extracted), `score` and
// `pred_none` (and `details` when the grader gives any). A summary line goes to stderr.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "api/grade.h"
#include "api/registries.h"
#include "cli/commands.h"
#include "common/error.h"

namespace kvbench::cli {

namespace {

struct GradeOptions {
  std::string task;
  std::string input;
  std::string output;  // empty = stdout
  std::string profile = "kvbench";
};

void run_grade(const GradeOptions& options) {
  // Written only once every line is graded, so an error leaves no partial output.
  const api::GradedFile graded = api::grade_file(options.task, options.input, options.profile);
  if (options.output.empty()) {
    std::cout << graded.jsonl;
  } else {
    std::ofstream file(options.output, std::ios::binary);
    if (!(file << graded.jsonl)) fail("{}: cannot write file", options.output);
  }
  const int64_t n = graded.lines;
  fmt::print(stderr, "grade {} {}: n={} mean_score={:.4f} pred_none_rate={:.4f}\n", options.task, options.input, n,
             n ? graded.score_sum / n : 0.0, n ? static_cast<double>(graded.pred_none) / n : 0.0);
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
      ->check(CLI::IsMember(api::profile_names()))
      ->capture_default_str();
  command->callback([options] { run_grade(*options); });
}

}  // namespace kvbench::cli
