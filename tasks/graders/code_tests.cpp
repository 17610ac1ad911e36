#include "tasks/graders/code_tests.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "common/json_file.h"

namespace kvbench::graders {

using json = nlohmann::json;

namespace {

constexpr const char* kPython = "/usr/bin/python3";
constexpr const char* kProgramFile = "solution.py";
constexpr std::size_t kMessageBytes = 600;

// Runs inside the sandbox as `python3 -c HARNESS MODE [FUNC_NAME]`, next to solution.py.
//  stdin:       runs the program as __main__ (the test input is its stdin).
//  functional:  stdin is {"input": args, one JSON value per line; "output": expected JSON}; prints
//               one JSON line {"passed": bool, "got": repr} after the program's own prints are
//               diverted, so they cannot be mistaken for the verdict.
//  decode:      stdin is HF's base64(zlib(pickle(str))); prints the str. Here so that unpickling
//               untrusted data happens inside the sandbox.
constexpr const char* kHarness = R"PY(
import io, json, sys

PRELUDE_MODULES = ("bisect", "collections", "copy", "datetime", "functools", "heapq", "io",
                   "itertools", "json", "math", "operator", "random", "re", "statistics", "string",
                   "sys", "typing")
PRELUDE = "".join(f"import {m}\nfrom {m} import *\n" for m in PRELUDE_MODULES)
# Star imports shadow builtins (math.pow over pow); put the builtins back on top.
PRELUDE += "from builtins import *\nsys.setrecursionlimit(100000)\n"


def program_namespace(module_name):
    namespace = {"__name__": module_name}
    exec(PRELUDE, namespace)
    return namespace


def compiled_program():
    with open("solution.py", encoding="utf-8") as source:
        return compile(source.read(), "solution.py", "exec")


def run_stdin():
    exec(compiled_program(), program_namespace("__main__"))


def run_functional(func_name):
    case = json.load(sys.stdin)
    args = [json.loads(line) for line in case["input"].split("\n") if line.strip()]
    expected = json.loads(case["output"])
    verdict_stream = sys.stdout
    sys.stdout, sys.stdin = io.StringIO(), io.StringIO()
    namespace = program_namespace("solution")
    exec(compiled_program(), namespace)
    result = getattr(namespace["Solution"](), func_name)(*args)
    if isinstance(result, tuple):
        result = list(result)
    passed = bool(result == expected)
    sys.stdout = verdict_stream
    print(json.dumps({"passed": passed, "got": repr(result)[:300]}))


def decode_hf_private_tests():
    import base64, pickle, zlib
    sys.stdout.write(pickle.loads(zlib.decompress(base64.b64decode(sys.stdin.buffer.read()))))


mode = sys.argv[1]
if mode == "stdin":
    run_stdin()
elif mode == "functional":
    run_functional(sys.argv[2])
elif mode == "decode":
    decode_hf_private_tests()
)PY";

const std::vector<std::string> kPythonEnv = {"PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8",
                                             "PYTHONHASHSEED=0"};

std::string tail(const std::string& text, std::size_t bytes = kMessageBytes) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

std::string head(const std::string& text, std::size_t bytes = kMessageBytes / 2) {
  return text.size() <= bytes ? text : text.substr(0, bytes) + "...";
}

// ---------------------------------------------------------------------------------------------
// Reading test files

// A field that is either JSON already or a string holding JSON text (HF stores both ways).
json json_or_json_text(const json& value, const std::string& where) {
  if (!value.is_string()) return value;
  try {
    return json::parse(value.get<std::string>());
  } catch (const json::parse_error& e) {
    fail("{}: malformed JSON text: {}", where, e.what());
  }
}

const std::string& string_at(const json& object, const char* name, const std::string& where) {
  auto it = object.find(name);
  if (it == object.end()) fail("{}: missing field \"{}\"", where, name);
  if (!it->is_string()) fail("{}: field \"{}\" is not a string", where, name);
  return it->get_ref<const std::string&>();
}

ProblemTests read_qwq_layout(const json& file, const std::string& where) {
  const std::string field_where = where + ": field \"input_output\"";
  const json io = json_or_json_text(file.at("input_output"), field_where);
  if (!io.is_object()) fail("{}: expected an object", field_where);
  for (const char* name : {"inputs", "outputs"})
    if (!io.contains(name) || !io[name].is_array()) fail("{}: missing list \"{}\"", field_where, name);
  const json& inputs = io["inputs"];
  const json& outputs = io["outputs"];
  if (inputs.size() != outputs.size())
    fail("{}: {} inputs but {} outputs", field_where, inputs.size(), outputs.size());
  ProblemTests tests;
  if (io.contains("fn_name") && io["fn_name"].is_string()) tests.func_name = io["fn_name"];
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is_string() || !outputs[i].is_string())
      fail("{}: test {} input/output is not a string", field_where, i);
    tests.cases.push_back({inputs[i].get<std::string>(), outputs[i].get<std::string>()});
  }
  return tests;
}

std::string decode_hf_private_tests(const std::string& encoded, const Sandbox& sandbox, const std::string& where) {
  // The decoded JSON can be far larger than a program's output budget, and takes longer to produce.
  SandboxConfig config = sandbox.config();
  config.limits.max_stdout_bytes = std::size_t{2} << 30;
  config.limits.memory_bytes = std::size_t{8} << 30;
  config.limits.wall_seconds = 120;
  config.limits.cpu_seconds = 120;
  SandboxResult decoded = Sandbox(config).run({{kPython, "-c", kHarness, "decode"}, {}, encoded, kPythonEnv});
  if (!decoded.clean_exit()) fail("{}: not JSON, and not base64(zlib(pickle)) either: {}", where, tail(decoded.stderr_text));
  return decoded.stdout_text;
}

// HF private_test_cases: a JSON list, its JSON text, or base64(zlib(pickle(JSON text))).
json hf_private_cases(const json& value, const std::string& where, const Sandbox& sandbox) {
  if (!value.is_string()) return value;
  json parsed = json::parse(value.get<std::string>(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded()) return parsed;
  return json_or_json_text(decode_hf_private_tests(value.get<std::string>(), sandbox, where), where);
}

// Appends HF test entries {input, output, testtype}; checks testtype against the problem's kind.
void append_hf_cases(const json& list, const std::string& where, ProblemTests& tests) {
  if (!list.is_array()) fail("{}: expected a list of tests", where);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string test_where = fmt::format("{}[{}]", where, i);
    if (!list[i].is_object()) fail("{}: expected an object", test_where);
    const std::string& type = string_at(list[i], "testtype", test_where);
    if (type != "stdin" && type != "functional") fail("{}: unknown testtype \"{}\"", test_where, type);
    if ((type == "functional") != tests.functional())
      fail("{}: testtype \"{}\" but metadata func_name is \"{}\"", test_where, type, tests.func_name);
    tests.cases.push_back({string_at(list[i], "input", test_where), string_at(list[i], "output", test_where)});
  }
}

ProblemTests read_hf_layout(const json& file, const std::string& where, const Sandbox& sandbox) {
  ProblemTests tests;
  if (file.contains("metadata")) {
    const json metadata = json_or_json_text(file["metadata"], where + ": field \"metadata\"");
    if (metadata.contains("func_name") && metadata["func_name"].is_string()) tests.func_name = metadata["func_name"];
  }
  const std::string public_where = where + ": field \"public_test_cases\"";
  append_hf_cases(json_or_json_text(require_field(file, "public_test_cases", where), public_where),
                  where + ": public_test_cases", tests);
  if (file.contains("private_test_cases"))
    append_hf_cases(hf_private_cases(file["private_test_cases"], where + ": field \"private_test_cases\"", sandbox),
                    where + ": private_test_cases", tests);
  return tests;
}

// ---------------------------------------------------------------------------------------------
// Comparing stdout

constexpr std::string_view kWhitespace = " \t\n\r\v\f";

std::string_view strip(std::string_view text) {
  const auto first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kWhitespace) - first + 1);
}

std::vector<std::string_view> split(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find_first_of(separators, start), text.size());
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> result;
  for (auto part : split(line, kWhitespace))
    if (!part.empty()) result.push_back(part);
  return result;
}

// A decimal number reduced to sign, significant digits and exponent: value = digits × 10^exponent.
struct DecimalValue {
  bool negative = false;
  std::string digits;  // no leading or trailing zeros; empty for zero
  long exponent = 0;
  bool operator==(const DecimalValue& o) const { return negative == o.negative && digits == o.digits && exponent == o.exponent; }
};

std::size_t count_digits(std::string_view text, std::size_t from) {
  std::size_t end = from;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  return end - from;
}

// Python's Decimal syntax restricted to finite numbers: [sign] digits [. digits] [e [sign] digits].
std::optional<DecimalValue> parse_decimal(std::string_view token) {
  DecimalValue value;
  std::size_t i = 0;
  if (i < token.size() && (token[i] == '+' || token[i] == '-')) value.negative = token[i++] == '-';
  const std::size_t integer_digits = count_digits(token, i);
  std::string mantissa(token.substr(i, integer_digits));
  i += integer_digits;
  std::size_t fraction_digits = 0;
  if (i < token.size() && token[i] == '.') {
    fraction_digits = count_digits(token, ++i);
    mantissa += token.substr(i, fraction_digits);
    i += fraction_digits;
  }
  if (mantissa.empty()) return std::nullopt;
  long exponent = 0;
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    bool negative_exponent = false;
    if (++i < token.size() && (token[i] == '+' || token[i] == '-')) negative_exponent = token[i++] == '-';
    const std::size_t exponent_digits = count_digits(token, i);
    if (exponent_digits == 0 || exponent_digits > 9) return std::nullopt;
    exponent = std::stol(std::string(token.substr(i, exponent_digits)));
    if (negative_exponent) exponent = -exponent;
    i += exponent_digits;
  }
  if (i != token.size()) return std::nullopt;
  mantissa.erase(0, std::min(mantissa.find_first_not_of('0'), mantissa.size()));
  value.exponent = exponent - static_cast<long>(fraction_digits);
  while (!mantissa.empty() && mantissa.back() == '0') {
    mantissa.pop_back();
    ++value.exponent;
  }
  if (mantissa.empty()) return DecimalValue{};  // zero, whatever its sign and exponent
  value.digits = std::move(mantissa);
  return value;
}

bool tokens_match(std::string_view actual, std::string_view expected) {
  if (actual == expected) return true;
  const auto a = parse_decimal(actual), e = parse_decimal(expected);
  return a && e && *a == *e;
}

bool line_matches(std::string_view actual, std::string_view expected) {
  const auto a = tokens(actual), e = tokens(expected);
  return a.size() == e.size() && std::equal(a.begin(), a.end(), e.begin(), tokens_match);
}

// ---------------------------------------------------------------------------------------------
// Running tests

std::optional<CodeTestFailure> failed_run(const SandboxResult& run) {
  if (run.timed_out) return CodeTestFailure{0, "timeout", fmt::format("killed after {:.1f} s", run.wall_seconds)};
  if (run.output_truncated) return CodeTestFailure{0, "output_limit", "stdout exceeded its limit"};
  if (run.exit_code != 0) {
    const std::string how = run.signal ? fmt::format("killed by signal {}", run.signal) : fmt::format("exit status {}", run.exit_code);
    return CodeTestFailure{0, "runtime_error", how + ": " + tail(run.stderr_text)};
  }
  return std::nullopt;
}

std::optional<CodeTestFailure> run_stdin_test(const std::string& program, const CodeTestCase& test, const Sandbox& sandbox) {
  const SandboxResult run = sandbox.run({{kPython, "-c", kHarness, "stdin"}, {{kProgramFile, program}}, test.input, kPythonEnv});
  if (auto failure = failed_run(run)) return failure;
  if (stdout_matches(run.stdout_text, test.output)) return std::nullopt;
  return CodeTestFailure{0, "wrong_answer",
                         fmt::format("expected {:?}, got {:?}", head(test.output), head(run.stdout_text))};
}

std::optional<CodeTestFailure> run_functional_test(const std::string& program, const std::string& func_name,
                                                   const CodeTestCase& test, const Sandbox& sandbox) {
  const json request = {{"input", test.input}, {"output", test.output}};
  const SandboxResult run = sandbox.run(
      {{kPython, "-c", kHarness, "functional", func_name}, {{kProgramFile, program}}, request.dump(), kPythonEnv});
  if (auto failure = failed_run(run)) return failure;
  const auto lines = split(strip(run.stdout_text), "\n");
  const json verdict = json::parse(lines.back(), nullptr, /*allow_exceptions=*/false);
  if (!verdict.is_object() || !verdict.contains("passed"))
    return CodeTestFailure{0, "runtime_error", "no verdict from the test harness: " + tail(run.stderr_text)};
  if (verdict["passed"] == true) return std::nullopt;
  return CodeTestFailure{0, "wrong_answer",
                         fmt::format("expected {}, got {}", head(test.output), verdict.value("got", std::string()))};
}

bool is_fence(std::string_view line) { return strip(line).substr(0, 3) == "```"; }

bool is_python_tag(std::string_view tag) { return tag == "python" || tag == "py" || tag == "python3"; }

}  // namespace

ProblemTests read_problem_tests(const std::filesystem::path& path, const Sandbox& sandbox) {
  const std::string where = path.string();
  const json file = read_json_file(path);
  if (!file.is_object()) fail("{}: expected a JSON object", where);
  ProblemTests tests = file.contains("input_output") ? read_qwq_layout(file, where) : read_hf_layout(file, where, sandbox);
  if (tests.cases.empty()) fail("{}: no test cases", where);
  return tests;
}

std::optional<std::string> extract_python_program(std::string_view output) {
  std::optional<std::string> last_python, last_untagged;
  const auto lines = split(output, "\n");
  for (std::size_t open = 0; open < lines.size(); ++open) {
    if (!is_fence(lines[open])) continue;
    const std::string_view tag = strip(strip(lines[open]).substr(3));
    std::size_t close = open + 1;
    while (close < lines.size() && strip(lines[close]) != "```") ++close;
    if (close == lines.size()) break;  // unterminated (e.g. generation cut off): not a program
    std::string body;
    for (std::size_t i = open + 1; i < close; ++i) body.append(lines[i]).append("\n");
    if (is_python_tag(tag)) last_python = body;
    if (tag.empty()) last_untagged = body;
    open = close;
  }
  return last_python ? last_python : last_untagged;
}

bool stdout_matches(std::string_view actual, std::string_view expected) {
  const auto a = split(strip(actual), "\n"), e = split(strip(expected), "\n");
  return a.size() == e.size() && std::equal(a.begin(), a.end(), e.begin(), line_matches);
}

json CodeTestReport::to_json() const {
  json failure_json = nullptr;
  if (failure) failure_json = {{"test_index", failure->test_index}, {"verdict", failure->verdict}, {"message", failure->message}};
  return {{"tests_total", total}, {"tests_passed", passed}, {"all_passed", all_passed()}, {"failure", failure_json}};
}

CodeTestReport run_code_tests(const std::string& program, const ProblemTests& tests, const Sandbox& sandbox) {
  if (tests.cases.empty()) fail("run_code_tests: the problem has no test cases");
  CodeTestReport report;
  report.total = tests.cases.size();
  for (std::size_t i = 0; i < tests.cases.size(); ++i) {
    auto failure = tests.functional() ? run_functional_test(program, tests.func_name, tests.cases[i], sandbox)
                                      : run_stdin_test(program, tests.cases[i], sandbox);
    if (failure) {
      failure->test_index = i;
      report.failure = std::move(failure);
      return report;
    }
    ++report.passed;
  }
  return report;
}

}  // namespace kvbench::graders
