// MATH500, AIME24/25 and HMMT Feb 2025 on the real files in ../shared: counts and fields (README.md),
// prompts against the literal reference strings, stop condition, grading, bad input.
#include <fstream>
#include <set>

#include "common/error.h"
#include "tasks/task.h"
#include "task_test_util.h"
#include "test_support.h"

using kvbench::tasks::make_task;
using kvbench::testing::write_temp;
using kvbench::tasks::Sample;

namespace {
std::vector<Sample> load_shared(const std::string& task, const std::string& relative) {
  return make_task(task)->load(kvbench::testing::shared_dir() / "datasets" / relative);
}
}  // namespace

TEST_CASE("MATH500 loads 500 problems with stable ids and metadata", "[tasks][math500]") {
  KVBENCH_REQUIRE_SHARED("datasets/math500/test.jsonl");
  auto task = make_task("math500");
  CHECK(task->default_dataset() == "math500/test.jsonl");
  const auto samples = load_shared("math500", "math500/test.jsonl");
  REQUIRE(samples.size() == 500);
  CHECK(samples[0].id == "test/precalculus/807.json");
  CHECK(samples[0].record["answer"] == "\\left( 3, \\frac{\\pi}{2} \\right)");
  CHECK(samples[0].record["subject"] == "Precalculus");
  CHECK(samples[0].record["level"] == 2);
  CHECK(samples[499].id == "test/geometry/615.json");
  CHECK(samples[499].record["answer"] == "106^\\circ");
  // Counts computed independently with Python's json module.
  int level5 = 0, algebra = 0;
  std::set<std::string> ids;
  for (const auto& s : samples) {
    level5 += s.record["level"] == 5;
    algebra += s.record["subject"] == "Algebra";
    ids.insert(s.id);
  }
  CHECK(level5 == 134);
  CHECK(algebra == 124);
  CHECK(ids.size() == 500);
}

TEST_CASE("MATH500 raw prompt is the reference string, chat splits instruction and problem", "[tasks][math500]") {
  KVBENCH_REQUIRE_SHARED("datasets/math500/test.jsonl");
  const auto samples = load_shared("math500", "math500/test.jsonl");
  const auto prompt = make_task("math500")->prompt(samples[0]);
  const std::string instruction =
      "Solve the following math problem. Show your reasoning step by step, then put your final answer in \\boxed{}.";
  const std::string problem =
      "Convert the point $(0,3)$ in rectangular coordinates to polar coordinates.  Enter your answer in the form "
      "$(r,\\theta),$ where $r > 0$ and $0 \\le \\theta < 2 \\pi.$";
  CHECK(prompt.raw == instruction + "\n\nProblem: " + problem + "\n\nSolution:");
  CHECK(prompt.system_text == instruction);
  REQUIRE(prompt.messages.size() == 2);
  CHECK(prompt.messages[0].role == "system");
  CHECK(prompt.messages[0].content == instruction);
  CHECK(prompt.messages[1].role == "user");
  CHECK(prompt.messages[1].content == "Problem: " + problem);
}

TEST_CASE("MATH500 stops at the first complete boxed answer, defaults", "[tasks][math500]") {
  auto task = make_task("math500");
  CHECK_FALSE(task->should_stop("so the answer is \\boxed{\\frac{1}{"));
  CHECK(task->should_stop("so the answer is \\boxed{\\frac{1}{2}}"));
  const auto defaults = task->defaults();
  CHECK(defaults.max_new_tokens == 2048);
  CHECK(defaults.temperature == 0.0);
  CHECK(defaults.rollouts == 1);
  CHECK_FALSE(make_task("aime24")->should_stop("\\boxed{1}"));
}

TEST_CASE("MATH500 grading: last boxed answer, math equivalence, pred=None", "[tasks][math500]") {
  auto task = make_task("math500");
  Sample sample{"test/precalculus/807.json", {{"answer", "\\left( 3, \\frac{\\pi}{2} \\right)"}}};
  auto good = task->grade(sample, "Thus $r=3$ and $\\theta=\\pi/2$, i.e. \\boxed{(3,\\frac{\\pi}{2})}.");
  CHECK(good.pred.has_value());
  CHECK(good.score == 1.0);
  CHECK(task->grade(sample, "\\boxed{(3, \\pi)}").score == 0.0);
  auto none = task->grade(sample, "I do not know.");
  CHECK_FALSE(none.pred.has_value());
  CHECK(none.score == 0.0);
  Sample no_gold{"x", kvbench::tasks::json::object()};
  CHECK_THROWS_WITH(task->grade(no_gold, "\\boxed{1}"), Catch::Contains("sample x") && Catch::Contains("\"answer\""));
}

TEST_CASE("AIME24 and AIME25 load 30 problems each, integer grading ignores leading zeros", "[tasks][aime]") {
  KVBENCH_REQUIRE_SHARED("datasets/aime24/test.jsonl");
  KVBENCH_REQUIRE_SHARED("datasets/aime25/test.jsonl");
  const auto aime24 = load_shared("aime24", "aime24/test.jsonl");
  REQUIRE(aime24.size() == 30);
  CHECK(aime24[0].id == "60");
  CHECK(aime24[0].record["answer"] == "204");
  CHECK(aime24[29].id == "89");
  CHECK(aime24[29].record["answer"] == "902");
  CHECK(aime24[7].id == "67");
  CHECK(aime24[7].record["answer"] == "025");

  const auto aime25 = load_shared("aime25", "aime25/test.jsonl");
  REQUIRE(aime25.size() == 30);
  CHECK(aime25[0].id == "I-1");
  CHECK(aime25[0].record["answer"] == "70");
  CHECK(aime25[0].record["competition"] == "AIME 2025 I");
  CHECK(aime25[29].id == "II-15");
  CHECK(aime25[29].record["answer"] == "240");

  auto task = make_task("aime24");
  CHECK(task->grade(aime24[7], "... so the answer is \\boxed{25}").score == 1.0);
  CHECK(task->grade(aime24[7], "\\boxed{26}").score == 0.0);
  CHECK(task->grade(aime24[0], "\\boxed{204}").score == 1.0);
}

TEST_CASE("AIME prompt: MathArena's instruction, then the problem", "[tasks][aime]") {
  KVBENCH_REQUIRE_SHARED("datasets/aime25/test.jsonl");
  const auto samples = load_shared("aime25", "aime25/test.jsonl");
  const auto prompt = make_task("aime25")->prompt(samples[0]);
  const std::string instruction =
      "Please reason step by step, and put your final answer within \\boxed{}.\n"
      "The answer is an integer between 0 and 999 inclusive.";
  CHECK(prompt.raw == instruction + "\n\nFind the sum of all integer bases $b>9$ for which $17_b$ is a divisor of $97_b.$");
  CHECK(prompt.system_text == instruction);
  CHECK(prompt.messages.back().content == "Find the sum of all integer bases $b>9$ for which $17_b$ is a divisor of $97_b.$");
  const auto defaults = make_task("aime25")->defaults();
  CHECK(defaults.temperature == 0.6);
  CHECK(defaults.top_p == 0.95);
  CHECK(defaults.rollouts == 16);
  CHECK(defaults.max_new_tokens == 32768);
}

TEST_CASE("HMMT Feb 2025 loads 30 LaTeX answers, graded by math equivalence", "[tasks][hmmt]") {
  KVBENCH_REQUIRE_SHARED("datasets/hmmt_feb_2025/test.jsonl");
  const auto samples = load_shared("hmmt-feb-2025", "hmmt_feb_2025/test.jsonl");
  REQUIRE(samples.size() == 30);
  CHECK(samples[0].id == "1");
  CHECK(samples[0].record["answer"] == "103");
  CHECK(samples[2].record["answer"] == "\\frac{1}{576}");
  CHECK(samples[29].record["answer"] == "\\sqrt{\\frac{95}{24}}");
  auto task = make_task("hmmt-feb-2025");
  CHECK(task->prompt(samples[0]).raw ==
        "Please reason step by step, and put your final answer within \\boxed{}.\n\nCompute the sum of the positive "
        "divisors (including $1$) of $9!$ that have units digit $1$.");
  CHECK(task->grade(samples[2], "\\boxed{\\dfrac{1}{576}}").score == 1.0);
  CHECK(task->grade(samples[2], "\\boxed{1/576}").score == 1.0);
  CHECK(task->grade(samples[2], "\\boxed{\\frac{1}{575}}").score == 0.0);
  CHECK(task->defaults().rollouts == 16);
}

TEST_CASE("math loaders name file and line for bad records", "[tasks][math500]") {
  auto task = make_task("math500");
  auto missing = write_temp("kvbench_math_missing.jsonl",
                            "{\"problem\": \"1+1\", \"answer\": \"2\", \"subject\": \"A\", \"level\": 1, "
                            "\"unique_id\": \"a\"}\n{\"problem\": \"2+2\", \"subject\": \"A\", \"level\": 1, "
                            "\"unique_id\": \"b\"}\n");
  CHECK_THROWS_WITH(task->load(missing), Catch::Contains(missing.string() + ":2") &&
                                              Catch::Contains("missing field \"answer\""));
  auto truncated = write_temp("kvbench_math_truncated.jsonl", "{\"problem\": \"1+1\", \"answ");
  CHECK_THROWS_WITH(task->load(truncated), Catch::Contains(truncated.string() + ":1: malformed JSON"));
  auto duplicate = write_temp("kvbench_math_duplicate.jsonl",
                              "{\"problem\": \"p\", \"answer\": \"2\", \"subject\": \"A\", \"level\": 1, \"unique_id\": \"a\"}\n"
                              "{\"problem\": \"q\", \"answer\": \"3\", \"subject\": \"A\", \"level\": 1, \"unique_id\": \"a\"}\n");
  CHECK_THROWS_WITH(task->load(duplicate), Catch::Contains(duplicate.string() + ":2") && Catch::Contains("duplicate id"));
  for (const auto& path : {missing, truncated, duplicate}) std::filesystem::remove(path);
}
