// Synthetic rare-fact recall: determinism, each fact exactly once, positions, prompt, grading, spec errors.
#include <cmath>

#include "common/error.h"
#include "tasks/rare_fact.h"
#include "test_support.h"

using kvbench::tasks::generate_rare_fact_samples;
using kvbench::tasks::make_task;
using kvbench::tasks::parse_rare_fact_spec;
using kvbench::tasks::RareFactSpec;

namespace {
std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++count;
  return count;
}

std::size_t words_in(const std::string& text) {
  std::size_t words = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n';
    words += !space && !in_word;
    in_word = !space;
  }
  return words;
}

// Written out independently of the generator: the fact sentence of issue 4.
std::string fact(int locker, const std::string& code) {
  return "The code for locker " + std::to_string(locker) + " is " + code + ".";
}
}  // namespace

TEST_CASE("rare-fact spec parsing", "[tasks][rare-fact]") {
  auto spec = parse_rare_fact_spec("rare-fact:seed=7,samples=3,words=120,facts=2,positions=0.25+0.75");
  CHECK(spec.seed == 7);
  CHECK(spec.samples == 3);
  CHECK(spec.words == 120);
  CHECK(spec.facts == 2);
  CHECK(spec.positions == std::vector<double>{0.25, 0.75});
  auto defaults = parse_rare_fact_spec("rare-fact");
  CHECK(defaults.samples == 20);
  CHECK(defaults.words == 400);
  CHECK(defaults.facts == 1);
  CHECK_THROWS_WITH(parse_rare_fact_spec("rare-fact:words=abc"), Catch::Contains("words"));
  CHECK_THROWS_WITH(parse_rare_fact_spec("rare-fact:colour=red"), Catch::Contains("unknown key \"colour\""));
  CHECK_THROWS_WITH(parse_rare_fact_spec("rare-fact:facts=2,positions=0.5"), Catch::Contains("1 positions for 2 facts"));
  CHECK_THROWS_WITH(parse_rare_fact_spec("rare-fact:positions=1.5"), Catch::Contains("positions"));
  CHECK_THROWS_WITH(parse_rare_fact_spec("math500/test.jsonl"), Catch::Contains("expected \"rare-fact:"));
}

TEST_CASE("rare-fact: same seed gives byte-identical samples, other seeds differ", "[tasks][rare-fact]") {
  auto task = make_task("rare-fact");
  const auto a = task->load("rare-fact:seed=3,samples=5,words=300,facts=2");
  const auto b = task->load("/any/datasets/root/rare-fact:seed=3,samples=5,words=300,facts=2");
  const auto c = task->load("rare-fact:seed=4,samples=5,words=300,facts=2");
  REQUIRE(a.size() == 5);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].id == b[i].id);
    CHECK(a[i].record.dump() == b[i].record.dump());
    CHECK(task->prompt(a[i]).raw == task->prompt(b[i]).raw);
    CHECK(task->prompt(a[i]).raw != task->prompt(c[i]).raw);
  }
  CHECK(a[0].id == "s3/0");
  CHECK(a[1].inputs["text"] != a[2].inputs["text"]);
  // Sample i does not depend on how many samples are asked for.
  const auto longer = task->load("rare-fact:seed=3,samples=8,words=300,facts=2");
  CHECK(longer[4].inputs.dump() == a[4].inputs.dump());
}

TEST_CASE("rare-fact: each fact appears exactly once, at its position, questions at the end", "[tasks][rare-fact]") {
  auto task = make_task("rare-fact");
  for (const std::string spec : {"rare-fact:seed=1,samples=10,words=400,facts=3",
                                 "rare-fact:seed=2,samples=10,words=100,facts=1",
                                 "rare-fact:seed=5,samples=4,words=2000,facts=2,positions=0+1"}) {
    INFO(spec);
    for (const auto& sample : task->load(spec)) {
      const std::string text = sample.inputs["text"];
      const auto& answers = sample.record["answers"];
      const auto& lockers = sample.record["lockers"];
      REQUIRE(answers.size() == lockers.size());
      CHECK(occurrences(text, "locker") == lockers.size());  // the filler never mentions lockers
      for (std::size_t f = 0; f < answers.size(); ++f) {
        const std::string sentence = fact(lockers[f].get<int>(), answers[f].get<std::string>());
        CHECK(occurrences(text, sentence) == 1);
        CHECK(answers[f].get<std::string>().size() == 4);
        // The fact sits within one filler sentence (< 16 words) of its requested position.
        const double before = words_in(text.substr(0, text.find(sentence)));
        const double filler = words_in(text) - 7.0 * answers.size();
        CHECK(std::abs(before - sample.record["positions"][f].get<double>() * filler) < 16 + 7.0 * answers.size());
      }
      const std::string raw = task->prompt(sample).raw;
      CHECK_THAT(raw, Catch::EndsWith("Question: What is the code for locker " +
                                      std::to_string(lockers.back().get<int>()) + "?\n\nAnswer:"));
    }
  }
}

TEST_CASE("rare-fact context length follows `words`", "[tasks][rare-fact]") {
  auto task = make_task("rare-fact");
  for (int words : {100, 400, 3000}) {
    const auto samples = task->load("rare-fact:seed=0,samples=3,words=" + std::to_string(words) + ",facts=1");
    for (const auto& s : samples) {
      const auto total = static_cast<int>(words_in(s.inputs["text"]));
      CHECK(total >= words + 7);
      CHECK(total < words + 7 + 16);
    }
  }
}

TEST_CASE("rare-fact prompt layout and grading", "[tasks][rare-fact]") {
  auto task = make_task("rare-fact");
  kvbench::tasks::Sample sample{"s0/0", {{"answers", {"4821"}}, {"lockers", {17}}, {"positions", {0.5}}},
                                {{"text", "Tom ran. The code for locker 17 is 4821. Mia hopped."}}};
  const auto prompt = task->prompt(sample);
  CHECK(prompt.raw ==
        "Read the following text and answer the question at the end.\n\n"
        "Tom ran. The code for locker 17 is 4821. Mia hopped.\n\nQuestion: What is the code for locker 17?\n\nAnswer:");
  CHECK(prompt.system_text == "Read the following text and answer the question at the end.");
  CHECK(task->grade(sample, " 4821").score == 1.0);
  CHECK(task->grade(sample, "The code for locker 17 is 4821.").score == 1.0);  // the locker number is not a code
  CHECK(task->grade(sample, "48210").score == 0.0);
  CHECK(task->grade(sample, "1234, then 4821").score == 0.0);
  auto none = task->grade(sample, "I forgot.");
  CHECK_FALSE(none.pred.has_value());

  kvbench::tasks::Sample two{"s0/1", {{"answers", {"1111", "2222"}}, {"lockers", {3, 4}}}, {{"text", "t"}}};
  CHECK(task->grade(two, "1111, 2222").score == 1.0);
  CHECK(task->grade(two, "1111, 3333").score == 0.5);
  CHECK(*task->grade(two, "1111 and 3333").pred == "1111,3333");
  CHECK_THAT(task->prompt(two).raw, Catch::Contains("questions at the end") &&
                                        Catch::EndsWith("locker 3?\nQuestion: What is the code for locker 4?\n\nAnswer:"));
}

TEST_CASE("rare-fact default spec loads", "[tasks][rare-fact]") {
  auto task = make_task("rare-fact");
  const auto samples = task->load(task->default_dataset());
  CHECK(samples.size() == 50);
}
