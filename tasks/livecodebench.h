// LiveCodeBench code generation from a QwQ-format prompt file: `livecodebench` (the 279-problem 2408-2502
// "v5" window of QwQ's file) and `livecodebench-v6` (HF code_generation_lite release_v6 in that format).
// Grading runs the last python block against the problem's tests in the sandbox; pass@1 needs those
// tests, which the prompt file does not carry. Without them grade() scores 0 with
// details {"graded": false}: the run still generates, but reports no pass@1.
#pragma once
#include <filesystem>
#include <optional>

#include "tasks/graders/code_sandbox.h"
#include "tasks/task.h"

namespace kvbench::tasks {

// Which release a task reads: its name, the default prompt file and the tests folder beside it.
struct LiveCodeBenchRelease {
  std::string task = "livecodebench";
  std::string dataset = "livecodebench/livecodebench_v5_2408_2502_prompts.jsonl";
  std::string tests_dir = "livecodebench_v5_tests";
};

struct LiveCodeBenchOptions {
  LiveCodeBenchRelease release;
  // Holds the files each record's `tests.fname` names (QwQ's per-problem layout or a HF
  // code_generation_lite row per file; see graders/code_tests.h). Unset: $KVBENCH_LCB_TESTS,
  // else release.tests_dir beside the prompt file.
  std::optional<std::filesystem::path> tests_dir;
  graders::SandboxConfig sandbox;
};

class LiveCodeBenchTask : public Task {
 public:
  explicit LiveCodeBenchTask(LiveCodeBenchOptions options = {});
  std::string name() const override { return options_.release.task; }
  std::string default_dataset() const override;
  // record: question_id, contest_id, contest_date, test_type ("stdin" | "functional", from the
  // prompt's `class Solution` starter code), tests_fname, tests_md5, tests_file (absolute, or null
  // when absent). inputs: prompt.
  std::vector<Sample> load(const std::filesystem::path& path) const override;
  Prompt prompt(const Sample& sample) const override;
  Grade grade(const Sample& sample, std::string_view output) const override;
  DecodingDefaults defaults() const override;

 private:
  std::filesystem::path tests_dir_for(const std::filesystem::path& dataset) const;

  LiveCodeBenchOptions options_;
  graders::Sandbox sandbox_;
};

std::unique_ptr<Task> make_livecodebench_task();
std::unique_ptr<Task> make_livecodebench_v6_task();

}  // namespace kvbench::tasks
