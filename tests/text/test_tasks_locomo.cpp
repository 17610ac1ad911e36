// LoCoMo on the real locomo10.json. Expected values come from the README's counts and from records
// read in Python when the test was written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>

#include "common/error.h"
#include "tasks/task.h"
#include "task_test_util.h"
#include "test_support.h"

using namespace kvbench::tasks;

namespace {

const char* const kLocomoFile = "datasets/locomo/locomo10.json";

const std::vector<Sample>& locomo_samples() {
  static const std::vector<Sample> samples = make_task("locomo")->load(kvbench::testing::shared_dir() / kLocomoFile);
  return samples;
}

const Sample& sample_with_id(const std::string& id) {
  const auto& samples = locomo_samples();
  auto it = std::find_if(samples.begin(), samples.end(), [&](const Sample& s) { return s.id == id; });
  REQUIRE(it != samples.end());
  return *it;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A one-conversation file in the official format with `qa` as its only QA item.
std::string conversation_with_qa(const std::string& qa) {
  return R"([{"sample_id": "conv-x", "conversation": {"speaker_a": "Ann", "speaker_b": "Bob",
      "session_1_date_time": "9:00 am on 1 May, 2023", "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Hi"}]},
      "qa": [)" + qa + "]}]";
}

}  // namespace

TEST_CASE("locomo loads 1,986 QA items with the README's category counts", "[tasks][locomo]") {
  KVBENCH_REQUIRE_SHARED(kLocomoFile);
  const auto& samples = locomo_samples();
  CHECK(samples.size() == 1986);
  std::map<int, int> categories;
  for (const auto& sample : samples) ++categories[sample.record.at("category").get<int>()];
  CHECK(categories == std::map<int, int>{{1, 282}, {2, 321}, {3, 96}, {4, 841}, {5, 446}});
  CHECK(samples.front().id == "conv-26/q0");
  CHECK(samples.back().id == "conv-50/q203");
}

TEST_CASE("locomo records: numeric answers as text, category 5 without answer", "[tasks][locomo]") {
  KVBENCH_REQUIRE_SHARED(kLocomoFile);
  CHECK(sample_with_id("conv-26/q0").record.at("answer") == "7 May 2023");
  CHECK(sample_with_id("conv-26/q1").record.at("answer") == "2022");
  const auto& adversarial = sample_with_id("conv-26/q152");
  CHECK(adversarial.record.at("category") == 5);
  CHECK_FALSE(adversarial.record.contains("answer"));
  CHECK(adversarial.record.at("adversarial_answer") == "self-care is important");
  const auto& with_answer = sample_with_id("conv-26/q167");
  CHECK(with_answer.record.at("answer") == "No");
  CHECK(with_answer.record.at("adversarial_answer") == "Yes");
}

TEST_CASE("locomo conversation: sessions in numeric order with dates, speaker turns, image captions",
          "[tasks][locomo]") {
  KVBENCH_REQUIRE_SHARED(kLocomoFile);
  const std::string conversation = sample_with_id("conv-26/q0").inputs.at("conversation");
  CHECK(conversation.rfind("Session 1 (1:56 pm on 8 May, 2023):\nCaroline: Hey Mel! Good to see you! How have you "
                           "been?\nMelanie: Hey Caroline!",
                           0) == 0);
  CHECK_THAT(conversation, Catch::Contains("\nCaroline: The transgender stories were so inspiring! I was so happy and "
                                           "thankful for all the support. [shares a photo of a dog walking past a "
                                           "wall with a painting of a woman]\n"));
  // A caption without img_url is still an image turn.
  CHECK_THAT(conversation, Catch::Contains("[shares a photo of a stack of bowls with different designs on them]"));
  CHECK(conversation.find("\n\nSession 2 (1:14 pm on 25 May, 2023):\n") < conversation.find("\n\nSession 10 ("));
  // conv-26 has dates for sessions up to 35 but turns only up to 19.
  CHECK(ends_with(conversation, "be content. [shares a photo of a painting with the words happiness painted on it]"));
  CHECK_THAT(conversation, Catch::Contains("\n\nSession 19 (9:55 am on 22 October, 2023):\n"));
  CHECK_THAT(conversation, !Catch::Contains("Session 20"));
}

TEST_CASE("locomo prompt: instruction, conversation, question, Answer:, category 5 adds the abstention rule",
          "[tasks][locomo]") {
  KVBENCH_REQUIRE_SHARED(kLocomoFile);
  auto task = make_task("locomo");
  const auto& temporal = sample_with_id("conv-26/q0");
  const Prompt prompt = task->prompt(temporal);
  CHECK(prompt.raw == prompt.system_text + "\n\n" + temporal.inputs.at("conversation").get<std::string>() +
                          "\n\nQuestion: When did Caroline go to the LGBTQ support group?\n\nAnswer:");
  CHECK_THAT(prompt.raw, !Catch::Contains("no information available"));
  REQUIRE(prompt.parts);  // kvpress's pipeline: the instruction and conversation, then the question
  CHECK(prompt.parts->context == prompt.system_text + "\n\n" + temporal.inputs.at("conversation").get<std::string>());
  CHECK(prompt.parts->question == "\n\nQuestion: When did Caroline go to the LGBTQ support group?");
  CHECK(prompt.parts->answer_prefix == "Answer:");
  REQUIRE(prompt.messages.size() == 2);
  CHECK(prompt.messages[0].content == prompt.system_text);
  CHECK(ends_with(prompt.messages[1].content, "Question: When did Caroline go to the LGBTQ support group?"));

  const Prompt adversarial = task->prompt(sample_with_id("conv-26/q152"));
  CHECK(ends_with(adversarial.raw, "\n\nQuestion: What did Caroline realize after her charity race?\nIf the answer "
                                   "cannot be found in the conversation, respond with \"no information available\"."
                                   "\n\nAnswer:"));
  CHECK(adversarial.system_text == prompt.system_text);
  CHECK(task->defaults().max_new_tokens == 32);
  CHECK(task->defaults().temperature == 0.0);
}

TEST_CASE("locomo grade: per-category rules on the first non-blank line", "[tasks][locomo]") {
  KVBENCH_REQUIRE_SHARED(kLocomoFile);
  auto task = make_task("locomo");
  // Cat 2, gold "7 May 2023"; the model's next invented question is ignored.
  Grade grade = task->grade(sample_with_id("conv-26/q0"), "\n 7 May, 2023\nQuestion: When did ...");
  REQUIRE(grade.pred);
  CHECK(*grade.pred == "7 May, 2023");
  CHECK(grade.score == 1.0);
  CHECK(grade.details.at("category") == 2);
  // Cat 1, gold "pottery, camping, painting, swimming": two of four gold parts found.
  grade = task->grade(sample_with_id("conv-26/q15"), "Painting and camping");
  CHECK(grade.score == Approx((2.0 / 3.0 + 2.0 / 3.0) / 4.0));
  grade = task->grade(sample_with_id("conv-26/q15"), "camping, painting");
  CHECK(grade.score == Approx(0.5));
  // Cat 3, gold "National park; she likes the outdoors".
  CHECK(task->grade(sample_with_id("conv-26/q42"), "a national park").score == 1.0);
  // Cat 5.
  CHECK(task->grade(sample_with_id("conv-26/q152"), "No information available").score == 1.0);
  CHECK(task->grade(sample_with_id("conv-26/q152"), "self-care is important").score == 0.0);
  CHECK(task->grade(sample_with_id("conv-26/q152"), "").pred == std::nullopt);
}

TEST_CASE("locomo: bad input names the file and the record", "[tasks][locomo]") {
  auto task = make_task("locomo");
  const auto load_error = [&](const std::string& name, const std::string& text) {
    return kvbench::testing::load_error(*task, name, text);
  };
  const std::string ok = conversation_with_qa(R"({"question": "Q?", "answer": "A", "category": 4})");
  CHECK_THAT(load_error("kvbench_locomo_category.json", conversation_with_qa(R"({"question": "Q?", "answer": "A"})")),
             Catch::Contains("conversation 0 (conv-x), qa 0") && Catch::Contains("\"category\""));
  CHECK_THAT(load_error("kvbench_locomo_answer.json", conversation_with_qa(R"({"question": "Q?", "category": 2})")),
             Catch::Contains("qa 0") && Catch::Contains("\"answer\" is missing"));
  CHECK_THAT(load_error("kvbench_locomo_cat5.json", conversation_with_qa(R"({"question": "Q?", "category": 5})")),
             Catch::Contains("qa 0") && Catch::Contains("\"adversarial_answer\" is missing"));
  CHECK_THAT(load_error("kvbench_locomo_category7.json",
                        conversation_with_qa(R"({"question": "Q?", "answer": "A", "category": 7})")),
             Catch::Contains("category 7"));
  std::string no_date = ok;
  no_date.replace(no_date.find("session_1_date_time"), 19, "session_9_date_time");
  CHECK_THAT(load_error("kvbench_locomo_date.json", no_date), Catch::Contains("\"session_1_date_time\" is missing"));
  CHECK_THAT(load_error("kvbench_locomo_truncated.json", ok.substr(0, ok.size() - 3)), Catch::Contains("byte"));

  const auto path = kvbench::testing::scratch_path("locomo_ok.json");
  std::ofstream(path) << ok;
  const auto samples = task->load(path);
  std::filesystem::remove(path);
  REQUIRE(samples.size() == 1);
  CHECK(samples[0].id == "conv-x/q0");
  CHECK(samples[0].inputs.at("conversation") == "Session 1 (9:00 am on 1 May, 2023):\nAnn: Hi");
}

namespace {

// A hand-written conversation in the official format: sessions out of key order, session 10 without a
// date, an image turn, Bob speaking first although he is speaker_b; QA items of categories 2 (a numeric
// answer), 1, 5 and 3.
const char* const kPaperFixture = R"([{"sample_id": "conv-p", "conversation": {"speaker_a": "Ann", "speaker_b": "Bob",
  "session_2_date_time": "2:00 pm on 2 May, 2023",
  "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "I moved to Oslo in 2022."}],
  "session_10": [{"speaker": "Cy", "dia_id": "D10:1", "text": "Hello both."}],
  "session_1_date_time": "1:00 pm on 1 May, 2023",
  "session_1": [{"speaker": "Bob", "dia_id": "D1:1", "text": "Hi Ann!"},
                {"speaker": "Ann", "dia_id": "D1:2", "text": "Look at my cat.", "img_url": ["u"],
                 "blip_caption": "a photo of a grey cat", "query": "cat"}],
  "session_11_date_time": "9:00 am on 9 May, 2023"},
  "qa": [{"question": "When did Ann move to Oslo?", "answer": 2022, "evidence": ["D2:1"], "category": 2},
         {"question": "Which pets are mentioned?", "answer": "cats, dogs, birds", "evidence": [], "category": 1},
         {"question": "What is Bob's dog called?", "adversarial_answer": "Rex", "evidence": [], "category": 5},
         {"question": "Where does Ann live?", "answer": "Oslo; she moved there", "evidence": [], "category": 3}]},
 {"sample_id": "conv-q", "conversation": {"speaker_a": "Dee", "speaker_b": "Eve",
  "session_1": [{"speaker": "Dee", "dia_id": "D1:1", "text": "Alone here."}]},
  "qa": [{"question": "Who is here?", "answer": "Dee", "evidence": [], "category": 4}]}])";

std::vector<Sample> paper_fixture_samples() {
  const auto path = kvbench::testing::write_temp("kvbench_locomo_paper.json", kPaperFixture);
  auto samples = make_task("locomo-paper")->load(path);
  std::filesystem::remove(path);
  return samples;
}

}  // namespace

TEST_CASE("locomo-paper prompt: the paper's strings byte for byte", "[tasks][locomo]") {
  const auto samples = paper_fixture_samples();
  REQUIRE(samples.size() == 5);
  auto task = make_task("locomo-paper");
  const std::string conversation =
      "[1:00 pm on 1 May, 2023]\nBob: Hi Ann!\nAnn: Look at my cat. [shared image: a photo of a grey cat]\n"
      "[2:00 pm on 2 May, 2023]\nAnn: I moved to Oslo in 2022.\nCy: Hello both.";
  const std::string system =
      "You are an AI assistant tasked with analyzing a conversation between Bob and Ann. Based on the provided "
      "conversation sessions, answer the question accurately. Focus on recalling past facts, user preferences, and "
      "temporal relationships. Answer the question using exact words from the conversation when possible.";
  const Prompt temporal = task->prompt(samples[0]);
  CHECK(temporal.raw == system + "\n\nInput: " + conversation + "\n\nQuestion: When did Ann move to Oslo?\nAnswer:");
  CHECK(temporal.system_text == system);
  const Prompt adversarial = task->prompt(samples[2]);
  CHECK(adversarial.raw == system + "\n\nInput: " + conversation +
                               "\n\nIf the answer cannot be found in the conversation, respond with \"no information "
                               "available\".\nQuestion: What is Bob's dog called?\nAnswer:");
  // One speaker only: the second is "Person B"; a session without a date has no date line.
  CHECK(task->prompt(samples[4]).raw ==
        "You are an AI assistant tasked with analyzing a conversation between Dee and Person B. Based on the provided "
        "conversation sessions, answer the question accurately. Focus on recalling past facts, user preferences, and "
        "temporal relationships. Answer the question using exact words from the conversation when possible.\n\n"
        "Input: Dee: Alone here.\n\nQuestion: Who is here?\nAnswer:");
  CHECK(task->defaults().max_new_tokens == 32);
}

TEST_CASE("locomo-paper grade: the whole stripped generation, numbers, commas, abstentions", "[tasks][locomo]") {
  const auto samples = paper_fixture_samples();
  REQUIRE(samples.size() == 5);
  auto paper = make_task("locomo-paper");
  auto longbench = make_task("locomo");
  // Numeric gold 2022, stored as its string.
  CHECK(samples[0].record.at("answer") == "2022");
  Grade grade = paper->grade(samples[0], "  2022\n");
  CHECK(grade.score == 1.0);
  CHECK(*grade.pred == "2022");
  // Multi-line: the paper scores every line ({in, 2022, question, where} against {2022}); locomo the first.
  grade = paper->grade(samples[0], "In 2022.\nQuestion: where?");
  CHECK(grade.score == Approx(2.0 * 1 / (4 + 1)));
  CHECK(*grade.pred == "In 2022.\nQuestion: where?");
  CHECK(longbench->grade(samples[0], "In 2022.\nQuestion: where?").score == Approx(2.0 / 3.0));
  // A stored record whose gold is a JSON number (as `kvbench grade` reads one) is graded as its string.
  Sample numeric = samples[0];
  numeric.record["answer"] = 2022;
  CHECK(paper->grade(numeric, "2022").score == 1.0);
  CHECK(longbench->grade(numeric, "2022").score == 1.0);
  // Category 1: a generation without commas is one part.
  CHECK(paper->grade(samples[1], "dogs\ncats").score == Approx(4.0 / 9.0));
  CHECK(paper->grade(samples[1], "cats, dogs, birds,").score == 1.0);
  // Category 5: the abstention phrases anywhere in the generation.
  CHECK(paper->grade(samples[2], "Rex.\nActually, no information available.").score == 1.0);
  CHECK(paper->grade(samples[2], "Rex").score == 0.0);
  CHECK(paper->grade(samples[2], "\n\n").pred == std::nullopt);
  // Category 3 against the whole gold, no cut at ';'.
  CHECK(paper->grade(samples[3], "Oslo").score == Approx(2.0 * 1 / (1 + 4)));
  CHECK(longbench->grade(samples[3], "Oslo").score == 1.0);
}
