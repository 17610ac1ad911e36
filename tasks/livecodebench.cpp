#include "tasks/livecodebench.h"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "common/error.h"
#include "tasks/graders/code_tests.h"
#include "tasks/jsonl.h"

namespace kvbench::tasks {

namespace {

// LeetCode problems give starter code with this class; the others read stdin.
constexpr std::string_view kFunctionalMarker = "class Solution";

const json& object_field(const json& object, const std::string& name, const std::string& where) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_object()) fail("{}: field \"{}\" is missing or not an object", where, name);
  return *it;
}

std::string record_text(const Sample& sample, const char* name) {
  const auto it = sample.record.find(name);
  if (it == sample.record.end() || !it->is_string()) fail("sample {}: record field \"{}\" is missing or not a string", sample.id, name);
  return it->get<std::string>();
}

Sample sample_from(const JsonlLine& line, const std::filesystem::path& tests_dir) {
  const json& value = line.value;
  const std::string& where = line.location;
  const std::string prompt = string_field(value, "prompt", where);
  const json& tests = object_field(value, "tests", where);
  const std::string fname = string_field(tests, "fname", where + ": tests");
  const std::filesystem::path tests_file = tests_dir / fname;

  Sample sample;
  sample.id = string_field(value, "question_id", where);
  sample.record = {{"question_id", sample.id},
                   {"contest_id", string_field(value, "contest_id", where)},
                   {"contest_date", string_field(value, "contest_date", where)},
                   {"test_type", prompt.find(kFunctionalMarker) != std::string::npos ? "functional" : "stdin"},
                   {"tests_fname", fname},
                   {"tests_md5", tests.value("md5", "")},
                   {"tests_file", nullptr}};
  if (std::filesystem::is_regular_file(tests_file))
    sample.record["tests_file"] = std::filesystem::absolute(tests_file).string();
  sample.inputs = {{"prompt", prompt}};
  return sample;
}

Grade ungraded(std::optional<std::string> pred, const std::string& reason) {
  return Grade{std::move(pred), 0.0, {{"graded", false}, {"reason", reason}}};
}

}  // namespace

LiveCodeBenchTask::LiveCodeBenchTask(LiveCodeBenchOptions options)
    : options_(std::move(options)), sandbox_(options_.sandbox) {}

std::string LiveCodeBenchTask::default_dataset() const { return options_.release.dataset; }

std::filesystem::path LiveCodeBenchTask::tests_dir_for(const std::filesystem::path& dataset) const {
  if (options_.tests_dir) return *options_.tests_dir;
  if (const char* env = std::getenv("KVBENCH_LCB_TESTS")) return env;
  return dataset.parent_path() / options_.release.tests_dir;
}

std::vector<Sample> LiveCodeBenchTask::load(const std::filesystem::path& path) const {
  const std::filesystem::path tests_dir = tests_dir_for(path);
  std::vector<Sample> samples;
  std::size_t with_tests = 0;
  for (const auto& line : read_jsonl(path)) {
    samples.push_back(sample_from(line, tests_dir));
    if (!samples.back().record["tests_file"].is_null()) ++with_tests;
  }
  if (with_tests < samples.size())
    spdlog::warn("livecodebench: {} of {} problems have no test file in {}; they are scored 0 with "
                 "graded=false (pass@1 needs LiveCodeBench's tests)",
                 samples.size() - with_tests, samples.size(), tests_dir.string());
  return samples;
}

Prompt LiveCodeBenchTask::prompt(const Sample& sample) const {
  // QwQ's prompt is one user turn (its instructions included); there is no system prompt.
  const auto it = sample.inputs.find("prompt");
  if (it == sample.inputs.end() || !it->is_string()) fail("sample {}: input field \"prompt\" is missing", sample.id);
  Prompt prompt;
  prompt.raw = it->get<std::string>();
  prompt.messages = {{"user", prompt.raw}};
  return prompt;
}

Grade LiveCodeBenchTask::grade(const Sample& sample, std::string_view output) const {
  std::optional<std::string> program = graders::extract_python_program(output);
  const json tests_file = sample.record.value("tests_file", json(nullptr));
  if (!tests_file.is_string())
    return ungraded(std::move(program), "no test cases for this problem; pass@1 needs LiveCodeBench's tests");
  if (!program) return Grade{std::nullopt, 0.0, {{"graded", true}, {"reason", "no python code block"}}};

  const graders::ProblemTests tests = graders::read_problem_tests(tests_file.get<std::string>(), sandbox_);
  const std::string expected_type = record_text(sample, "test_type");
  if ((expected_type == "functional") != tests.functional())
    fail("{}: tests are {} but problem {} is {}", tests_file.get<std::string>(),
         tests.functional() ? "functional" : "stdin", sample.id, expected_type);
  const graders::CodeTestReport report = graders::run_code_tests(*program, tests, sandbox_);
  json details = report.to_json();
  details["graded"] = true;
  return Grade{std::move(program), report.all_passed() ? 1.0 : 0.0, std::move(details)};
}

DecodingDefaults LiveCodeBenchTask::defaults() const {
  // Long reasoning traces before the program (QwQ/R1 evaluate LCB with 32k tokens), sampled rollouts
  // at T=0.6/top-p 0.95 with pass@1 as their mean; 16 rollouts as in the paper's evaluation.
  return DecodingDefaults{32768, 0.6, 0.95, 16};
}

std::unique_ptr<Task> make_livecodebench_task() { return std::make_unique<LiveCodeBenchTask>(); }

// KVpop Table 2's release: HF livecodebench/code_generation_lite release_v6, converted to QwQ's prompt-file
// format (datasets/README.md); same prompt, grading and defaults as v5.
std::unique_ptr<Task> make_livecodebench_v6_task() {
  LiveCodeBenchOptions options;
  options.release = {"livecodebench-v6", "livecodebench/livecodebench_v6_prompts.jsonl", "livecodebench_v6_tests"};
  return std::make_unique<LiveCodeBenchTask>(std::move(options));
}

}  // namespace kvbench::tasks
