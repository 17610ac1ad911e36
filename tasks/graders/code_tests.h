// LiveCodeBench-style code grading: extract the program from a model's output, run it against a
// problem's tests in the sandbox (code_sandbox.h), and pass only if every test passes.
//
// Two kinds of tests, as in LiveCodeBench:
//  - stdin:      feed `input` on stdin; stdout must match `output` line by line and token by token
//                (surrounding whitespace ignored; numeric tokens equal by exact decimal value, the way
//                lcb_runner compares Decimal values, so "1.50" == "1.5" but 0.3333 != 0.33333).
//  - functional: `input` holds one JSON value per line (the arguments); the program's
//                `Solution().<func_name>(*args)` must `==` the JSON-decoded `output` (tuples as lists).
// Both run with the same standard-library names pre-imported that LiveCodeBench's runner provides
// (typing, collections, heapq, math, ... ), since model solutions rely on them.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tasks/graders/code_sandbox.h"

namespace kvbench::graders {

struct CodeTestCase {
  std::string input;
  std::string output;
};

struct ProblemTests {
  std::string func_name;  // empty: stdin tests; otherwise functional tests calling this method
  std::vector<CodeTestCase> cases;
  bool functional() const { return !func_name.empty(); }
};

// Reads one problem's test file, in either of the two published layouts:
//  - QwQ's per-problem file (what the dataset's `tests.fname` names):
//      {"input_output": "<JSON text of {inputs: [...], outputs: [...], fn_name: null | "name"}>"}
//  - a HF livecodebench/code_generation_lite row: {"public_test_cases", "private_test_cases",
//    "metadata"}, where the test lists are JSON lists of {input, output, testtype} or JSON text of
//    one, `metadata` is JSON (text) with "func_name", and `private_test_cases` may also be HF's
//    base64(zlib(pickle(JSON text))). That encoding is decoded by python3 inside the sandbox, so the
//    untrusted pickle never runs outside it.
// Throws kvbench::Error naming the file and field on malformed input.
ProblemTests read_problem_tests(const std::filesystem::path& path, const Sandbox& sandbox);

// The program in the last complete fenced code block tagged python (```python / ```py / ```python3),
// else in the last complete untagged one (```). nullopt when there is none (pred=None).
std::optional<std::string> extract_python_program(std::string_view output);

// True when `actual` stdout matches `expected` under the stdin comparison rule above.
bool stdout_matches(std::string_view actual, std::string_view expected);

struct CodeTestFailure {
  std::size_t test_index = 0;
  std::string verdict;  // "wrong_answer", "runtime_error", "timeout", "output_limit"
  std::string message;  // stderr tail or the mismatching value, bounded
};

struct CodeTestReport {
  std::size_t total = 0;
  std::size_t passed = 0;  // tests run before the first failure that passed (running stops there)
  std::optional<CodeTestFailure> failure;
  bool all_passed() const { return !failure && passed == total; }
  nlohmann::json to_json() const;
};

// Runs the tests in order, each in a fresh sandbox, stopping at the first failure.
CodeTestReport run_code_tests(const std::string& program, const ProblemTests& tests, const Sandbox& sandbox);

}  // namespace kvbench::graders
