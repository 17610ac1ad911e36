// GPQA Diamond. The real file is read in place from the password zip; these tests never print decrypted
// text (checks compare sizes, ids and letters only, so a failure message cannot leak a question).
#include <map>

#include "common/error.h"
#include "tasks/gpqa.h"
#include "test_support.h"

using kvbench::tasks::gpqa_permutation;
using kvbench::tasks::gpqa_samples_from_csv;
using kvbench::tasks::make_task;
using kvbench::tasks::Sample;

namespace {
const std::string kHeader =
    "Question,Correct Answer,Incorrect Answer 1,Incorrect Answer 2,Incorrect Answer 3,Record ID,High-level domain,"
    "Subdomain\n";
}

TEST_CASE("GPQA permutation: hand-checked values of the documented shuffle", "[tasks][gpqa]") {
  // From an independent Python implementation of FNV-1a-64 + SplitMix64 + Fisher-Yates.
  CHECK(gpqa_permutation("rec06pnAkLOr2t2mp") == std::vector<int>{2, 0, 3, 1});
  CHECK(gpqa_permutation("rec0Arme2jcXQZnAW") == std::vector<int>{2, 0, 1, 3});
  CHECK(gpqa_permutation("reczkBiPPNrNN49Hp") == std::vector<int>{0, 3, 2, 1});
  CHECK(gpqa_permutation("x") == std::vector<int>{3, 0, 2, 1});
}

TEST_CASE("GPQA prompt: simple-evals template with shuffled options, grade by letter", "[tasks][gpqa]") {
  const auto samples = gpqa_samples_from_csv(
      kHeader + "\"What is 2+2?\n(Think.)\",Four,Three,Five,\" Twenty-two \",x,Math,Arithmetic\n", "fake.csv");
  REQUIRE(samples.size() == 1);
  const Sample& sample = samples[0];
  CHECK(sample.id == "x");
  CHECK(sample.record["answer"] == "B");  // permutation of "x" is {3, 0, 2, 1}: the correct option is shown second
  CHECK(sample.record["domain"] == "Math");
  CHECK_FALSE(sample.record.contains("question"));  // decrypted text stays out of stored records
  auto task = make_task("gpqa-diamond");
  const auto prompt = task->prompt(sample);
  const std::string instruction =
      "Answer the following multiple choice question. The last line of your response should be of the following "
      "format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. Think step by step before answering.";
  CHECK(prompt.raw == instruction + "\n\nWhat is 2+2?\n(Think.)\n\nA) Twenty-two\nB) Four\nC) Five\nD) Three");
  CHECK(prompt.system_text == instruction);
  CHECK(prompt.messages[1].content == "What is 2+2?\n(Think.)\n\nA) Twenty-two\nB) Four\nC) Five\nD) Three");

  CHECK(task->grade(sample, "Let me think.\nAnswer: B").score == 1.0);
  CHECK(task->grade(sample, "Answer: C").score == 0.0);
  auto none = task->grade(sample, "no idea");
  CHECK_FALSE(none.pred.has_value());
  const auto defaults = task->defaults();
  CHECK(defaults.temperature == 0.6);
  CHECK(defaults.top_p == 0.95);
  CHECK(defaults.rollouts == 8);
}

TEST_CASE("GPQA bad CSV: missing column, empty option, duplicate id name the record", "[tasks][gpqa]") {
  CHECK_THROWS_WITH(gpqa_samples_from_csv("Question,Record ID\nq,x\n", "f.csv"),
                    Catch::Contains("f.csv: missing column \"High-level domain\""));
  CHECK_THROWS_WITH(gpqa_samples_from_csv(kHeader + "q,a,b,c,d,x,M,S\nq,a,b,,d,y,M,S\n", "f.csv"),
                    Catch::Contains("f.csv: row 2 (line 3): empty answer option"));
  CHECK_THROWS_WITH(gpqa_samples_from_csv(kHeader + "q,a,b,c,d,x,M,S\nq,a,b,c,d,x,M,S\n", "f.csv"),
                    Catch::Contains("f.csv: row 2 (line 3): duplicate id \"x\""));
}

TEST_CASE("GPQA Diamond loads the 198 official rows from the password zip", "[tasks][gpqa]") {
  KVBENCH_REQUIRE_SHARED("datasets/gpqa_diamond/gpqa_diamond.zip");
  auto task = make_task("gpqa-diamond");
  const auto samples = task->load(kvbench::testing::shared_dir() / "datasets" / task->default_dataset());
  REQUIRE(samples.size() == 198);
  // Reference values from Python's csv module on the same member (README: 93/86/19 domains).
  std::map<std::string, int> domains, letters;
  std::size_t question_bytes = 0;
  for (const auto& s : samples) {
    ++domains[s.record["domain"].get<std::string>()];
    ++letters[s.record["answer"].get<std::string>()];
    question_bytes += s.inputs["question"].get<std::string>().size();
  }
  CHECK(domains == std::map<std::string, int>{{"Biology", 19}, {"Chemistry", 93}, {"Physics", 86}});
  CHECK(letters == std::map<std::string, int>{{"A", 44}, {"B", 49}, {"C", 59}, {"D", 46}});
  CHECK(question_bytes == 85505);  // stripped questions, summed

  CHECK(samples[0].id == "rec06pnAkLOr2t2mp");
  CHECK(samples[0].record["subdomain"] == "Physics (general)");
  CHECK(samples[0].record["answer"] == "B");
  // Option sizes (bytes): correct 8, incorrect 9, 8, 8; shown in permutation order {2, 0, 3, 1}.
  std::vector<std::size_t> shown;
  for (const auto& option : samples[0].inputs["options"]) shown.push_back(option.get<std::string>().size());
  CHECK(shown == std::vector<std::size_t>{8, 8, 8, 9});
  CHECK(samples[0].inputs["question"].get<std::string>().size() == 262);
  CHECK(samples[197].id == "reczkBiPPNrNN49Hp");
  CHECK(samples[197].record["answer"] == "A");
}
