// LongHealth on a hand-written fixture in the published benchmark_v5.json format (tests/data).
#include <fstream>

#include "common/error.h"
#include "tasks/task.h"
#include "task_test_util.h"
#include "test_support.h"

using kvbench::tasks::make_task;
using kvbench::testing::write_temp;

namespace {
std::filesystem::path fixture() { return kvbench::testing::source_dir() / "tests/data/longhealth_fixture.json"; }

// One patient with one question; `question` is spliced in as the question object.
std::string one_patient(const std::string& question) {
  return R"({"patient_01": {"name": "n", "birthday": "b", "diagnosis": "d", "texts": {"text_0": "T"}, "questions": [)" +
         question + "]}}";
}
}  // namespace

TEST_CASE("LongHealth fixture: ids, gold letters from the `correct` text", "[tasks][longhealth]") {
  auto task = make_task("longhealth");
  const auto samples = task->load(fixture());
  REQUIRE(samples.size() == 5);
  CHECK(samples[0].id == "patient_01/q1");
  CHECK(samples[0].record["answer"] == "B");  // "Alphamab" is answer_b
  CHECK(samples[1].id == "patient_01/q2");
  CHECK(samples[1].record["answer"].is_null());  // "9.8 g/dL " equals no option exactly (tasks.py: None)
  CHECK(samples[2].id == "patient_02/q1");
  CHECK(samples[2].record["answer"] == "C");
  CHECK(samples[2].record["patient"] == "patient_02");
  CHECK(samples[3].record["answer"] == "C");  // " Alpha" and "Alpha " equal "Alpha" only once trimmed
  CHECK(samples[4].record["answer"] == "B");  // answer_b and answer_d both equal it: the first counts
  CHECK(task->defaults().max_new_tokens == 16);
  CHECK(task->defaults().temperature == 0.0);
}

TEST_CASE("LongHealth raw prompt is the reference string", "[tasks][longhealth]") {
  auto task = make_task("longhealth");
  const auto samples = task->load(fixture());
  const std::string instruction =
      "Read the following patient records and answer the multiple-choice question by responding with only the "
      "letter of the correct answer (A, B, C, D, or E).";
  const std::string expected =
      instruction +
      "\n\nPatient Records:\n"
      "Discharge letter, 02/05/2019. Mrs. Example was admitted with fatigue and night sweats.\n\n"
      "Lab report, 03/05/2019. Hemoglobin 9.8 g/dL. Leukocytes 14.2 /nL.\n\n"
      "Follow-up, 10/06/2019. Therapy started with drug Alphamab; no side effects so far."
      "\n\nQuestion: Which drug was started at the follow-up visit?\n\n"
      "A) Betacillin\nB) Alphamab\nC) Gammazol\nD) Deltastatin\nE) Epsilonide\n\nAnswer:";
  const auto prompt = task->prompt(samples[0]);
  CHECK(prompt.raw == expected);
  // kvpress's pipeline reads the instruction and records as the context, the question and options after.
  REQUIRE(prompt.parts);
  CHECK(prompt.parts->context == expected.substr(0, expected.find("\n\nQuestion:")));
  CHECK(prompt.parts->question ==
        expected.substr(expected.find("\n\nQuestion:"), expected.rfind("\n\nAnswer:") - expected.find("\n\nQuestion:")));
  CHECK(prompt.parts->answer_prefix == "Answer:");
  CHECK(prompt.system_text == instruction);
  CHECK(prompt.messages[0].content == instruction);
  // Protocol::Reference: LONGHEALTH_SYSTEM as evaluate.py's --auto_frozen counts it, its "\n\n" included.
  CHECK(make_task("longhealth", kvbench::tasks::Protocol::Reference)->prompt(samples[0]).system_text ==
        instruction + "\n\n");
  // text_10 follows text_9 (the file's order; a key sort would put it after text_1).
  const std::string raw = task->prompt(samples[2]).raw;
  CHECK_THAT(raw, Catch::Contains("Note 8.\n\nNote 9.\n\nNote 10: the patient moved to a rehabilitation clinic.\n\nQuestion:"));
  // The file's order, not the numbers': patient_03 stores text_1, text_10, text_0, text_2.
  CHECK_THAT(task->prompt(samples[3]).raw, Catch::Contains("Records:\nSecond note, stored first.\n\nTenth note, stored "
                                                           "second.\n\nFirst note, stored third.\n\nThird note, stored last."));
}

TEST_CASE("LongHealth grading: first A-E letter", "[tasks][longhealth]") {
  auto task = make_task("longhealth");
  const auto samples = task->load(fixture());
  CHECK(task->grade(samples[0], "B").score == 1.0);
  CHECK(task->grade(samples[0], " B) Alphamab").score == 1.0);
  CHECK(task->grade(samples[0], "Alphamab (B)").score == 0.0);  // 'A' comes first, as in the reference
  auto none = task->grade(samples[0], "not sure");
  CHECK_FALSE(none.pred.has_value());
  CHECK(none.score == 0.0);
  // No gold letter: tasks.py's pred == gold makes None == None correct, and any letter wrong.
  CHECK(task->grade(samples[1], "not sure").score == 1.0);
  CHECK(task->grade(samples[1], "E").score == 0.0);
}

TEST_CASE("LongHealth bad input names the file, patient and question", "[tasks][longhealth]") {
  auto task = make_task("longhealth");
  const std::string options = R"("answer_a": "a", "answer_b": "b", "answer_c": "c", "answer_d": "d", "answer_e": "e")";
  auto missing = write_temp("kvbench_lh_missing.json", one_patient(R"({"No": 1, "question": "q", "correct": "a"})"));
  CHECK_THROWS_WITH(task->load(missing), Catch::Contains(missing.string() + ": patient_01 question 1") &&
                                              Catch::Contains("missing field \"answer_a\""));
  auto unmatched = write_temp("kvbench_lh_unmatched.json",
                              one_patient(R"({"No": 1, "question": "q", "correct": "zzz", )" + options + "}"));
  CHECK(task->load(unmatched).at(0).record["answer"].is_null());  // tasks.py's None, not an error
  auto truncated = write_temp("kvbench_lh_truncated.json", R"({"patient_01": {"texts": {"text_0": "T"}, "quest)");
  CHECK_THROWS_WITH(task->load(truncated), Catch::Contains(truncated.string()) && Catch::Contains("malformed JSON"));
  auto no_texts = write_temp("kvbench_lh_notexts.json", R"({"patient_07": {"questions": []}})");
  CHECK_THROWS_WITH(task->load(no_texts), Catch::Contains("patient_07") && Catch::Contains("\"texts\""));
  for (const auto& path : {missing, unmatched, truncated, no_texts}) std::filesystem::remove(path);
}
