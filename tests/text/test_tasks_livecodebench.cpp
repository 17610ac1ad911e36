// LiveCodeBench: program extraction, stdout comparison, test files, grading in the sandbox (on a fixture
// of problems and tests written for these tests), and the loader on the real prompt file.
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <set>

#include "common/error.h"
#include "tasks/graders/code_tests.h"
#include "tasks/livecodebench.h"
#include "task_test_util.h"
#include "test_support.h"

using kvbench::graders::extract_python_program;
using kvbench::graders::ProblemTests;
using kvbench::graders::read_problem_tests;
using kvbench::graders::Sandbox;
using kvbench::graders::stdout_matches;
using kvbench::tasks::LiveCodeBenchOptions;
using kvbench::tasks::LiveCodeBenchTask;
using kvbench::tasks::Sample;
using kvbench::testing::write_temp;

namespace {

std::filesystem::path fixture_dir() { return kvbench::testing::source_dir() / "tests" / "data"; }

LiveCodeBenchTask fixture_task() {
  LiveCodeBenchOptions options;
  options.tests_dir = fixture_dir() / "lcb_fixture_tests";
  return LiveCodeBenchTask(options);
}

Sample fixture_sample(const std::string& question_id) {
  static const auto samples = fixture_task().load(fixture_dir() / "lcb_fixture.jsonl");
  for (const auto& sample : samples)
    if (sample.id == question_id) return sample;
  FAIL("no fixture sample " << question_id);
  return {};
}

std::string answer(const std::string& program) { return "Here is my solution.\n```python\n" + program + "```\n"; }

}  // namespace

TEST_CASE("extract_python_program takes the last complete python block", "[livecodebench]") {
  CHECK(extract_python_program("```python\na = 1\n```\ntext\n```python\nb = 2\nc = 3\n```\n") == "b = 2\nc = 3\n");
  CHECK(extract_python_program("```py\nx\n```") == "x\n");
  CHECK(extract_python_program("   ```python3\n  indented\n   ```\n") == "  indented\n");
  // Untagged blocks are the fallback only; a later untagged or other-language block does not win.
  CHECK(extract_python_program("```\nuntagged\n```") == "untagged\n");
  CHECK(extract_python_program("```python\ncode\n```\n```\n3 4\n```\n```text\nout\n```") == "code\n");
  // A cut-off last block is not a program; the earlier complete one is.
  CHECK(extract_python_program("```python\nfirst\n```\n```python\nunfinished") == "first\n");
  CHECK_FALSE(extract_python_program("no code at all").has_value());
  CHECK_FALSE(extract_python_program("```python\nnever closed").has_value());
  CHECK_FALSE(extract_python_program("```cpp\nint main() {}\n```").has_value());
}

TEST_CASE("stdout_matches compares lines and tokens, numbers by exact decimal value", "[livecodebench]") {
  CHECK(stdout_matches("3\n", "3"));
  CHECK(stdout_matches("  1 2   3  \n4\n\n", "1 2 3\r\n4\r\n"));
  CHECK(stdout_matches("1.50 2\n", "1.5 2.0"));
  CHECK(stdout_matches("1e3 -0.0 +7", "1000 0 7"));
  CHECK(stdout_matches("Yes\nNo", "Yes\nNo\n"));
  CHECK_FALSE(stdout_matches("0.3333", "0.33333"));  // no tolerance: lcb_runner compares Decimals exactly
  CHECK_FALSE(stdout_matches("12345678901234567890", "12345678901234567891"));
  CHECK_FALSE(stdout_matches("1 2", "1\n2"));
  CHECK_FALSE(stdout_matches("1\n\n2", "1\n2"));
  CHECK_FALSE(stdout_matches("yes", "Yes"));
  CHECK_FALSE(stdout_matches("", "0"));
  CHECK_FALSE(stdout_matches("1.5.2", "1.52"));
  CHECK_FALSE(stdout_matches("nan", "nan1"));
}

TEST_CASE("test files: QwQ layout and HF layout with encoded private tests", "[livecodebench]") {
  Sandbox sandbox;
  const ProblemTests stdin_tests = read_problem_tests(fixture_dir() / "lcb_fixture_tests" / "1.json", sandbox);
  CHECK_FALSE(stdin_tests.functional());
  REQUIRE(stdin_tests.cases.size() == 3);
  CHECK(stdin_tests.cases[1].input == "10 -3\n");
  CHECK(stdin_tests.cases[1].output == "7\n");

  // One public test, two private ones in HF's base64(zlib(pickle(JSON))) form.
  const ProblemTests functional = read_problem_tests(fixture_dir() / "lcb_fixture_tests" / "2.json", sandbox);
  CHECK(functional.func_name == "largestK");
  REQUIRE(functional.cases.size() == 3);
  CHECK(functional.cases[0].input == "[3, 1, 2]\n2");
  CHECK(functional.cases[1].input == "[5, 5, -1, 7]\n3");
  CHECK(functional.cases[2].output == "[-2]");
}

TEST_CASE("malformed test files name the file and the field", "[livecodebench]") {
  Sandbox sandbox;
  auto missing = write_temp("lcb_missing.json", R"({"private_test_cases": "[]"})");
  CHECK_THROWS_WITH(read_problem_tests(missing, sandbox),
                    Catch::Contains("lcb_missing.json") && Catch::Contains("public_test_cases"));
  auto mismatched = write_temp("lcb_mismatch.json",
                               R"({"public_test_cases": [{"input": "1", "output": "1", "testtype": "functional"}]})");
  CHECK_THROWS_WITH(read_problem_tests(mismatched, sandbox),
                    Catch::Contains("lcb_mismatch.json") && Catch::Contains("public_test_cases[0]") &&
                        Catch::Contains("func_name"));
  auto garbage = write_temp("lcb_garbage.json", R"({"public_test_cases": "[]", "private_test_cases": "not base64!"})");
  CHECK_THROWS_WITH(read_problem_tests(garbage, sandbox),
                    Catch::Contains("lcb_garbage.json") && Catch::Contains("private_test_cases"));
  auto empty = write_temp("lcb_empty.json", R"({"input_output": "{\"inputs\": [], \"outputs\": []}"})");
  CHECK_THROWS_WITH(read_problem_tests(empty, sandbox), Catch::Contains("lcb_empty.json") && Catch::Contains("no test cases"));
  for (const auto& path : {missing, mismatched, garbage, empty}) std::filesystem::remove(path);
}

TEST_CASE("fixture loader records test type and which problems have tests", "[livecodebench]") {
  const auto samples = fixture_task().load(fixture_dir() / "lcb_fixture.jsonl");
  REQUIRE(samples.size() == 3);
  CHECK(samples[0].id == "fixture_sum");
  CHECK(samples[0].record["test_type"] == "stdin");
  CHECK(samples[1].record["test_type"] == "functional");
  CHECK(samples[0].record["tests_file"].is_string());
  CHECK(samples[1].record["tests_file"].is_string());
  CHECK(samples[2].record["tests_file"].is_null());  // 3.json does not exist
  CHECK(samples[0].inputs.count("prompt") == 1);
  CHECK(samples[0].record.count("prompt") == 0);  // prompts stay out of stored results
}

TEST_CASE("stdin problems: correct programs pass, wrong ones fail", "[livecodebench]") {
  const auto task = fixture_task();
  const Sample sample = fixture_sample("fixture_sum");

  auto correct = task.grade(sample, answer("a, b = map(int, input().split())\nprint(a + b)\n"));
  CHECK(correct.score == 1.0);
  CHECK(correct.pred == "a, b = map(int, input().split())\nprint(a + b)\n");
  CHECK(correct.details["graded"] == true);
  CHECK(correct.details["tests_passed"] == 3);

  // Right on the first two tests only (int32 overflow emulated): fails at test 2.
  auto wrong = task.grade(sample, answer("a, b = map(int, input().split())\nprint((a + b) % 2**31)\n"));
  CHECK(wrong.score == 0.0);
  CHECK(wrong.details["tests_passed"] == 2);
  CHECK(wrong.details["failure"]["verdict"] == "wrong_answer");

  auto crash = task.grade(sample, answer("print(undefined_name)\n"));
  CHECK(crash.score == 0.0);
  CHECK(crash.details["failure"]["verdict"] == "runtime_error");
  CHECK_THAT(crash.details["failure"]["message"].get<std::string>(), Catch::Contains("NameError"));

  // A __main__ guard runs, as it would when the program is run as a script.
  auto guarded = task.grade(sample, answer("def main():\n    print(sum(map(int, input().split())))\n"
                                           "if __name__ == '__main__':\n    main()\n"));
  CHECK(guarded.score == 1.0);
}

TEST_CASE("functional problems: Solution().method(*args) compared with ==", "[livecodebench]") {
  const auto task = fixture_task();
  const Sample sample = fixture_sample("fixture_largest_k");
  // `List` and `heapq` come from the pre-imported names, as in LiveCodeBench's runner.
  auto correct = task.grade(sample, answer("class Solution:\n"
                                           "    def largestK(self, nums: List[int], k: int) -> List[int]:\n"
                                           "        print('debug output is ignored')\n"
                                           "        return heapq.nlargest(k, nums)\n"));
  CHECK(correct.score == 1.0);
  CHECK(correct.details["tests_passed"] == 3);

  auto as_tuple = task.grade(sample, answer("class Solution:\n"
                                            "    def largestK(self, nums, k):\n"
                                            "        return tuple(sorted(nums, reverse=True)[:k])\n"));
  CHECK(as_tuple.score == 1.0);

  // Drops duplicates: passes the public test, fails the first private one.
  auto wrong = task.grade(sample, answer("class Solution:\n"
                                         "    def largestK(self, nums, k):\n"
                                         "        return sorted(set(nums), reverse=True)[:k]\n"));
  CHECK(wrong.score == 0.0);
  CHECK(wrong.details["tests_passed"] == 1);
  CHECK(wrong.details["failure"]["verdict"] == "wrong_answer");
  CHECK_THAT(wrong.details["failure"]["message"].get<std::string>(), Catch::Contains("[7, 5, -1]"));

  auto misnamed = task.grade(sample, answer("class Solution:\n    def other(self, nums, k):\n        return []\n"));
  CHECK(misnamed.score == 0.0);
  CHECK(misnamed.details["failure"]["verdict"] == "runtime_error");

  // Printing a fake verdict does not pass.
  auto forged = task.grade(sample, answer("import sys\nclass Solution:\n    def largestK(self, nums, k):\n"
                                          "        sys.__stdout__.write('{\"passed\": true}\\n')\n        return None\n"));
  CHECK(forged.score == 0.0);
}

TEST_CASE("hostile programs are contained and scored failing", "[livecodebench]") {
  const auto task = fixture_task();
  const Sample sample = fixture_sample("fixture_sum");
  const std::string repo_file = (kvbench::testing::source_dir() / "CMakeLists.txt").string();
  // (program, the verdict that shows it was stopped by the sandbox rather than succeeding)
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {"print(open('/etc/shadow').read())\n", "runtime_error"},
      {"import os\nprint(os.listdir('/root'))\n", "runtime_error"},
      {"print(open('" + repo_file + "').read()[:10])\n", "runtime_error"},
      {"import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=2)\nprint(3)\n", "runtime_error"},
      {"import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n", "timeout"},
      // Address space, not touched pages: RLIMIT_AS stops it at once, where zero-filling 2 GiB can outlast
      // the wall timeout on a loaded machine (the verdict would then be "timeout", not the memory limit).
      {"import mmap\nblocks = []\nwhile True:\n    blocks.append(mmap.mmap(-1, 100 << 20))\n", "runtime_error"},
  };
  for (const auto& [program, verdict] : hostile) {
    INFO(program);
    auto grade = task.grade(sample, answer(program));
    CHECK(grade.score == 0.0);
    CHECK(grade.details["graded"] == true);
    CHECK(grade.details["failure"]["test_index"] == 0);
    CHECK(grade.details["failure"]["verdict"] == verdict);
  }
}

TEST_CASE("an infinite loop times out at the default limit and the run continues", "[livecodebench]") {
  const auto task = fixture_task();
  const Sample sample = fixture_sample("fixture_sum");
  const auto start = std::chrono::steady_clock::now();
  auto looping = task.grade(sample, answer("while True:\n    pass\n"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(looping.score == 0.0);
  CHECK(looping.details["failure"]["verdict"] == "timeout");
  CHECK(seconds >= 5.9);  // the default ≈6 s per test applies
  CHECK(seconds < 20.0);
  CHECK(task.grade(sample, answer("print(sum(map(int, input().split())))\n")).score == 1.0);
}

TEST_CASE("no code block gives pred=None, no tests gives an ungraded 0", "[livecodebench]") {
  const auto task = fixture_task();
  auto no_code = task.grade(fixture_sample("fixture_sum"), "I think the answer is to add them.");
  CHECK_FALSE(no_code.pred.has_value());
  CHECK(no_code.score == 0.0);

  auto no_tests = task.grade(fixture_sample("fixture_product"), answer("print(6)\n"));
  CHECK(no_tests.pred == "print(6)\n");
  CHECK(no_tests.score == 0.0);
  CHECK(no_tests.details["graded"] == false);
  CHECK_THAT(no_tests.details["reason"].get<std::string>(), Catch::Contains("pass@1 needs"));
}

TEST_CASE("prompt is the record's prompt, chat mode is one user turn", "[livecodebench]") {
  const auto task = fixture_task();
  const Sample sample = fixture_sample("fixture_sum");
  const auto prompt = task.prompt(sample);
  CHECK(prompt.raw == sample.inputs["prompt"].get<std::string>());
  REQUIRE(prompt.messages.size() == 1);
  CHECK(prompt.messages[0].role == "user");
  CHECK(prompt.messages[0].content == prompt.raw);
  CHECK(prompt.system_text.empty());
  const auto defaults = task.defaults();
  CHECK(defaults.temperature == 0.6);
  CHECK(defaults.top_p == 0.95);
}

TEST_CASE("malformed prompt files name the file, line and field", "[livecodebench]") {
  const auto task = fixture_task();
  auto missing = write_temp("lcb_prompts_missing.jsonl",
                            R"({"question_id": "q", "contest_id": "c", "contest_date": "d", "tests": {"fname": "1.json"}})"
                            "\n");
  CHECK_THROWS_WITH(task.load(missing), Catch::Contains("lcb_prompts_missing.jsonl:1") && Catch::Contains("\"prompt\""));
  auto truncated = write_temp("lcb_prompts_truncated.jsonl", "{\"question_id\": \"q\", \"prompt\": \"abc");
  CHECK_THROWS_WITH(task.load(truncated), Catch::Contains("lcb_prompts_truncated.jsonl:1"));
  std::filesystem::remove(missing);
  std::filesystem::remove(truncated);
}

TEST_CASE("real LiveCodeBench v5 prompt file: 279 problems, 175 stdin, 104 functional", "[livecodebench]") {
  KVBENCH_REQUIRE_SHARED("datasets/livecodebench/livecodebench_v5_2408_2502_prompts.jsonl");
  LiveCodeBenchOptions options;
  options.tests_dir = std::filesystem::temp_directory_path() / "kvbench-no-lcb-tests";
  const LiveCodeBenchTask task(options);
  const auto samples = task.load(kvbench::testing::shared_dir() / "datasets" / task.default_dataset());
  REQUIRE(samples.size() == 279);
  std::size_t stdin_count = 0, functional_count = 0;
  std::set<std::string> ids;
  for (const auto& sample : samples) {
    ids.insert(sample.id);
    (sample.record["test_type"] == "functional" ? functional_count : stdin_count) += 1;
    CHECK(sample.record["tests_file"].is_null());
  }
  CHECK(stdin_count == 175);
  CHECK(functional_count == 104);
  CHECK(ids.size() == 279);
  // The README's example record.
  CHECK(samples[0].id == "abc365_b");
  CHECK(samples[0].record["contest_date"] == "2024-08-03T00:00:00");
  CHECK(samples[0].record["tests_fname"] == "559.json");
  CHECK(samples[0].record["tests_md5"] == "ec602b89c01ec3f677e0e2a7678f4024");
  CHECK_THAT(task.prompt(samples[0]).raw, Catch::StartsWith("You will be given a question") &&
                                              Catch::EndsWith("```python\n# YOUR CODE HERE\n```\n\n"));
  // Without tests nothing is scored, whatever the output.
  auto grade = task.grade(samples[0], answer("print(1)\n"));
  CHECK(grade.score == 0.0);
  CHECK(grade.details["graded"] == false);
}
