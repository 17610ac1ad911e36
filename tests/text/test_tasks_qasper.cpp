// Qasper and the LongBench-style subset, on the real test file. Expected values come from the README's
// counts and from the JSON read independently (nlohmann here, Python when the test was written).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "common/error.h"
#include "common/json_file.h"
#include "tasks/task.h"
#include "task_test_util.h"
#include "test_support.h"

using namespace kvbench::tasks;
using namespace kvbench::testing;

namespace {

const char* const kQasperFile = "datasets/qasper/qasper-test-v0.3.json";

std::filesystem::path qasper_path() { return kvbench::testing::shared_dir() / kQasperFile; }

const std::vector<Sample>& qasper_samples() {
  static const std::vector<Sample> samples = make_task("qasper")->load(qasper_path());
  return samples;
}

const Sample& sample_with_id(const std::vector<Sample>& samples, const std::string& id) {
  auto it = std::find_if(samples.begin(), samples.end(), [&](const Sample& s) { return s.id == id; });
  REQUIRE(it != samples.end());
  return *it;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A minimal paper in the official format, with `qa` as its only question.
std::string paper_with_question(const std::string& qa) {
  return R"({"2001.00001": {"title": "T", "abstract": "A", "full_text": [{"section_name": "Intro", "paragraphs": ["P"]}],
             "figures_and_tables": [], "qas": [)" + qa + "]}}";
}

}  // namespace

TEST_CASE("qasper loads every question of the test split with the README's counts", "[tasks][qasper]") {
  KVBENCH_REQUIRE_SHARED(kQasperFile);
  const auto& samples = qasper_samples();
  CHECK(samples.size() == 1451);
  std::set<std::string> papers, ids;
  std::map<std::string, int> types;
  std::size_t references = 0;
  for (const auto& sample : samples) {
    papers.insert(sample.record.at("paper_id").get<std::string>());
    ids.insert(sample.id);
    for (const auto& reference : sample.record.at("references")) {
      ++references;
      ++types[reference.at("type").get<std::string>()];
    }
  }
  CHECK(papers.size() == 416);
  CHECK(ids.size() == 1451);
  CHECK(references == 3554);
  CHECK(types == std::map<std::string, int>{{"extractive", 1817}, {"abstractive", 878}, {"boolean", 493}, {"none", 366}});
}

TEST_CASE("qasper references follow the official evaluator's stringification", "[tasks][qasper]") {
  KVBENCH_REQUIRE_SHARED(kQasperFile);
  const auto& antiscam = sample_with_id(qasper_samples(), "397a1e851aab41c455c2b284f5e4947500d797f0");
  CHECK(antiscam.record.at("paper_id") == "1911.10742");
  CHECK(antiscam.record.at("question") == "How big is the ANTISCAM dataset?");
  CHECK(antiscam.record.at("references").at(0) == kvbench::json{{"answer", " 3,044 sentences in 100 dialogs"},
                                                                {"type", "extractive"}});
  const auto& lexicons = sample_with_id(qasper_samples(), "f54e19f7ecece1bb0ef3171403ae322ad572ff00");
  CHECK(lexicons.record.at("references") == kvbench::json::parse(R"([{"answer": "Unanswerable", "type": "none"},
      {"answer": "No", "type": "boolean"}, {"answer": "No", "type": "boolean"}])"));
  // Several spans are joined with ", ".
  const auto& metrics = sample_with_id(qasper_samples(), "b584739622d0c53830e60430b13fd3ae6ff43669");
  CHECK(starts_with(metrics.record.at("references").at(0).at("answer"),
                    "Perplexity, Response-Intent Prediction (RIP), Response-Slot Prediction (RSP), "));
}

TEST_CASE("qasper document: title, abstract, then named sections with their paragraphs", "[tasks][qasper]") {
  KVBENCH_REQUIRE_SHARED(kQasperFile);
  const std::string document =
      sample_with_id(qasper_samples(), "397a1e851aab41c455c2b284f5e4947500d797f0").inputs.at("document");
  CHECK(starts_with(document, "End-to-End Trainable Non-Collaborative Dialog System\n\nAbstract:\nEnd-to-end "
                              "task-oriented dialog models have achieved promising performance"));
  CHECK_THAT(document, Catch::Contains("\n\nIntroduction:\nConsiderable progress has been made building end-to-end dial"));
  CHECK_THAT(document, Catch::Contains("\n\nDatasets ::: AntiScam Dataset:\n"));
  // Sections keep the file's order.
  CHECK(document.find("\n\nRelated Work:\n") < document.find("\n\nConclusion and Future Work:\n"));
  // 1905.07894 opens with an unnamed section: its paragraph follows the abstract without a heading.
  const auto& samples = qasper_samples();
  auto abusive = std::find_if(samples.begin(), samples.end(),
                              [](const Sample& s) { return s.record.at("paper_id") == "1905.07894"; });
  REQUIRE(abusive != samples.end());
  CHECK_THAT(abusive->inputs.at("document").get<std::string>(),
             Catch::Contains("with a final F-measure of 93.26%.\n\nIn recent years, online social networks have"));
}

TEST_CASE("qasper prompt: instruction, article, question, Answer:", "[tasks][qasper]") {
  KVBENCH_REQUIRE_SHARED(kQasperFile);
  auto task = make_task("qasper");
  const auto& sample = sample_with_id(qasper_samples(), "397a1e851aab41c455c2b284f5e4947500d797f0");
  const Prompt prompt = task->prompt(sample);
  CHECK(starts_with(prompt.system_text, "You are given a scientific article and a question."));
  CHECK_THAT(prompt.system_text, Catch::Contains("write \"unanswerable\"") &&
                                     Catch::Contains("answer \"yes\", \"no\", or \"unanswerable\""));
  CHECK(prompt.raw == prompt.system_text + "\n\nArticle: " + sample.inputs.at("document").get<std::string>() +
                          "\n\nQuestion: How big is the ANTISCAM dataset?\n\nAnswer:");
  REQUIRE(prompt.parts);  // kvpress's pipeline: the instruction and article, then the question
  CHECK(prompt.parts->context == prompt.system_text + "\n\nArticle: " + sample.inputs.at("document").get<std::string>());
  CHECK(prompt.parts->question == "\n\nQuestion: How big is the ANTISCAM dataset?");
  CHECK(prompt.parts->answer_prefix == "Answer:");
  REQUIRE(prompt.messages.size() == 2);
  CHECK(prompt.messages[0].role == "system");
  CHECK(prompt.messages[0].content == prompt.system_text);
  CHECK(prompt.messages[1].role == "user");
  CHECK(ends_with(prompt.messages[1].content, "Question: How big is the ANTISCAM dataset?"));
  CHECK(task->defaults().max_new_tokens == 128);
  CHECK(task->defaults().temperature == 0.0);
}

TEST_CASE("qasper grade: max F1 over references, official Answer-F1 and best type in details", "[tasks][qasper]") {
  KVBENCH_REQUIRE_SHARED(kQasperFile);
  auto task = make_task("qasper");
  const auto& lexicons = sample_with_id(qasper_samples(), "f54e19f7ecece1bb0ef3171403ae322ad572ff00");
  Grade grade = task->grade(lexicons, "  No.\n");
  REQUIRE(grade.pred);
  CHECK(*grade.pred == "No.");
  CHECK(grade.score == 1.0);
  CHECK(grade.details.at("answer_f1") == 1.0);
  CHECK(grade.details.at("best_type") == "boolean");
  grade = task->grade(lexicons, "unanswerable");
  CHECK(grade.score == 1.0);
  CHECK(grade.details.at("best_type") == "none");
  // [no it is unanswerable] vs "Unanswerable" and "No": both F1 = 2 * (1/4) / (1 + 1/4) = 0.4; first wins.
  grade = task->grade(lexicons, "No, it is unanswerable");
  CHECK(grade.score == Approx(0.4));
  CHECK(grade.details.at("best_type") == "none");
  grade = task->grade(lexicons, " \n");
  CHECK_FALSE(grade.pred);
  CHECK(grade.score == 0.0);
}

TEST_CASE("qasper-longbench: the 200 smallest question ids, first annotation only", "[tasks][qasper]") {
  KVBENCH_REQUIRE_SHARED(kQasperFile);
  auto task = make_task("qasper-longbench");
  const auto samples = task->load(qasper_path());
  REQUIRE(samples.size() == 200);

  // The rule, applied independently to the raw JSON.
  std::vector<std::string> all_ids;
  const kvbench::json papers = kvbench::read_json_file(qasper_path());
  for (const auto& [paper_id, paper] : papers.items()) {
    for (const auto& qa : paper.at("qas")) all_ids.push_back(qa.at("question_id"));
  }
  std::sort(all_ids.begin(), all_ids.end());
  for (std::size_t i = 0; i < samples.size(); ++i) CHECK(samples[i].id == all_ids[i]);
  CHECK(samples.front().id == "000549a217ea24432c0656598279dbb85378c113");
  CHECK(samples.back().id == "256dfa501a71d7784520a527f43aec0549b1afea");

  std::map<std::string, int> types;
  for (const auto& sample : samples) {
    REQUIRE(sample.record.at("references").size() == 1);
    ++types[sample.record.at("references").at(0).at("type").get<std::string>()];
  }
  CHECK(types == std::map<std::string, int>{{"extractive", 105}, {"abstractive", 52}, {"boolean", 26}, {"none", 17}});
  // 000549a2…: annotations "The twitter dataset is English-only; …" (abstractive), "Yes", "Yes".
  CHECK(samples.front().record.at("references").at(0).at("type") == "abstractive");
  CHECK(task->grade(samples.front(), "Yes").score == 0.0);

  const Prompt prompt = task->prompt(samples.front());
  CHECK(ends_with(prompt.raw, "\n\n Answer the question based on the above article as concisely as you can, using a "
                              "single phrase or sentence if possible. If the question cannot be answered based on the "
                              "information in the article, write \"unanswerable\". If the question is a yes/no "
                              "question, answer \"yes\", \"no\", or \"unanswerable\". Do not provide any "
                              "explanation.\n\nQuestion: Do they evaluate only on English datasets?\n\nAnswer:"));
  CHECK(starts_with(prompt.raw, prompt.system_text + "\n\nArticle: "));
  CHECK(task->defaults().max_new_tokens == 128);
}

TEST_CASE("qasper: bad input names the file and the record", "[tasks][qasper]") {
  auto task = make_task("qasper");
  const std::string good_answer =
      R"({"answer": {"unanswerable": false, "extractive_spans": [], "yes_no": true, "free_form_answer": ""}})";
  const auto load_error = [&](const std::string& name, const std::string& text) {
    return kvbench::testing::load_error(*task, name, text);
  };

  const std::string ok = paper_with_question(R"({"question": "Q?", "question_id": "q1", "answers": [)" + good_answer + "]}");
  const auto path = write_temp("kvbench_qasper_ok.json", ok);
  const auto samples = task->load(path);
  std::filesystem::remove(path);
  REQUIRE(samples.size() == 1);
  CHECK(samples[0].record.at("references").at(0).at("answer") == "Yes");
  CHECK(samples[0].inputs.at("document") == "T\n\nAbstract:\nA\n\nIntro:\nP");

  CHECK_THAT(load_error("kvbench_qasper_missing.json", paper_with_question(R"({"question": "Q?", "question_id": "q1"})")),
             Catch::Contains("paper 2001.00001, question 0") && Catch::Contains("\"answers\""));
  CHECK_THAT(load_error("kvbench_qasper_empty.json",
                        paper_with_question(R"({"question": "Q?", "question_id": "q1", "answers": [{"answer":
                            {"unanswerable": false, "extractive_spans": [], "yes_no": null, "free_form_answer": ""}}]})")),
             Catch::Contains("question 0, answer 0") && Catch::Contains("no span"));
  CHECK_THAT(load_error("kvbench_qasper_type.json",
                        paper_with_question(R"({"question": 7, "question_id": "q1", "answers": [)" + good_answer + "]}")),
             Catch::Contains("\"question\" should be a string"));
  CHECK_THAT(load_error("kvbench_qasper_truncated.json", ok.substr(0, ok.size() / 2)), Catch::Contains("byte"));
  CHECK_THAT(load_error("kvbench_qasper_list.json", "[]"), Catch::Contains("expected an object"));
}

namespace {

// A hand-written dev-format file: a named section with two paragraphs, one with an empty name and one with
// a null name; a question with its trailing space; every kind of annotation; a paper without sections.
const char* const kPaperFixture = R"({
 "2001.00002": {"title": "Counting sheep", "abstract": "We count sheep.",
  "full_text": [{"section_name": "Introduction", "paragraphs": ["P1", "P2"]},
                {"section_name": "", "paragraphs": ["Unheaded."]},
                {"section_name": null, "paragraphs": ["Null-named.", ""]}],
  "figures_and_tables": [],
  "qas": [{"question": "How many sheep? ", "question_id": "q-kinds", "answers": [
     {"answer": {"unanswerable": true, "extractive_spans": [], "yes_no": null, "free_form_answer": "", "evidence": [], "highlighted_evidence": []}},
     {"answer": {"unanswerable": false, "extractive_spans": ["span one", "span two"], "yes_no": null, "free_form_answer": "", "evidence": [], "highlighted_evidence": []}},
     {"answer": {"unanswerable": false, "extractive_spans": ["ignored"], "yes_no": false, "free_form_answer": "", "evidence": [], "highlighted_evidence": []}},
     {"answer": {"unanswerable": false, "extractive_spans": [], "yes_no": null, "free_form_answer": "Free form.", "evidence": [], "highlighted_evidence": []}},
     {"answer": {"unanswerable": false, "extractive_spans": [], "yes_no": null, "free_form_answer": "", "evidence": [], "highlighted_evidence": []}}]},
   {"question": "Is it good?", "question_id": "q-yes", "answers": [
     {"answer": {"unanswerable": false, "extractive_spans": [], "yes_no": true, "free_form_answer": "", "evidence": [], "highlighted_evidence": []}}]}]},
 "2001.00001": {"title": "Empty", "abstract": "A.", "full_text": [], "figures_and_tables": [],
  "qas": [{"question": "Why?", "question_id": "q-empty", "answers": [
     {"answer": {"unanswerable": false, "extractive_spans": ["the span one span two"], "yes_no": null, "free_form_answer": "", "evidence": [], "highlighted_evidence": []}}]}]}})";

const char* const kPaperInstruction =
    "You are an expert researcher. Read the following scientific paper carefully. Answer the user's question based "
    "only on the provided text. Responses can be extractive, abstractive or yes/no.\n\n1. Identify the relevant "
    "paragraphs, tables, or figures (Evidence).\n2. Formulate an answer based on the evidence.\n3. If the answer "
    "cannot be found in the text, respond with \"Unanswerable\".\n\n";

std::vector<Sample> paper_samples() {
  const auto path = write_temp("kvbench_qasper_paper.json", kPaperFixture);
  auto samples = make_task("qasper-paper")->load(path);
  std::filesystem::remove(path);
  return samples;
}

}  // namespace

TEST_CASE("qasper-paper: dev split, the paper's prompt byte for byte and its references", "[tasks][qasper]") {
  auto task = make_task("qasper-paper");
  CHECK(task->default_dataset() == "qasper/qasper-dev-v0.3.json");
  const auto samples = paper_samples();
  REQUIRE(samples.size() == 3);
  CHECK(samples[2].id == "q-empty");  // papers in the file's order (tasks.py iterates the dict)
  CHECK(task->prompt(samples[2]).raw ==
        std::string(kPaperInstruction) + "Title: Empty\n\nAbstract:\nA.\n\nQuestion: Why?\n\nAnswer:");
  const Prompt kinds = task->prompt(samples[0]);
  CHECK(kinds.raw == std::string(kPaperInstruction) +
                         "Title: Counting sheep\n\nAbstract:\nWe count sheep.\n\nIntroduction:\nP1\nP2\n\nUnheaded.\n\n"
                         "Null-named.\n\n\nQuestion: How many sheep? \n\nAnswer:");
  CHECK(kinds.system_text + "\n\n" == kPaperInstruction);
  CHECK(samples[0].record.at("references") == kvbench::json::parse(R"([{"answer": "unanswerable", "type": "none"},
      {"answer": "span one span two", "type": "extractive"}, {"answer": "no", "type": "boolean"},
      {"answer": "Free form.", "type": "abstractive"}, {"answer": "unanswerable", "type": "none"}])"));
  CHECK(task->defaults().max_new_tokens == 128);
}

TEST_CASE("qasper-paper grade: max over references on the whole stripped generation", "[tasks][qasper]") {
  auto task = make_task("qasper-paper");
  const auto samples = paper_samples();
  REQUIRE(samples.size() == 3);
  // "Yes, because ..." is just "yes"; several lines are one generation.
  Grade grade = task->grade(samples[1], "Yes, because the paper says so.\nMore text.");
  CHECK(grade.score == 1.0);
  CHECK(*grade.pred == "Yes, because the paper says so.\nMore text.");
  CHECK(task->grade(samples[1], "It is, yes.").score == Approx(2.0 * 1 / (3 + 1)));
  // Abstention matches the unanswerable references; "No." matches the yes_no one.
  grade = task->grade(samples[0], " Unanswerable.\n");
  CHECK(grade.score == 1.0);
  CHECK(grade.details.at("best_type") == "none");
  CHECK(task->grade(samples[0], "No.").details.at("best_type") == "boolean");
  // Spans joined by a space, articles dropped, numbers as tokens: {span, one} against {span, one, span, two}.
  grade = task->grade(samples[2], "The span one");
  CHECK(grade.score == Approx(2.0 * 2 / (2 + 4)));
  CHECK(task->grade(samples[2], "").pred == std::nullopt);
  CHECK(task->grade(samples[0], "3,044 sheep").score == 0.0);
}
