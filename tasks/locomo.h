// LoCoMo (snap-research/LoCoMo data/locomo10.json): the loader and gold answers that both LoCoMo tasks
// share — `locomo` (LongBench-style, tasks/locomo.cpp) and `locomo-paper` (the counter-causal paper's
// protocol, tasks/locomo_paper.cpp); they differ in prompt, context layout and scoring.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tasks/record_fields.h"
#include "tasks/task.h"

namespace kvbench::tasks {

constexpr int kLocomoAdversarialCategory = 5;

// A task's layout of one conversation object: the prompt inputs every QA item over it shares.
using LocomoInputs = json (*)(const json& conversation, const RecordFields& where);

// Session numbers N of the conversation's "session_N" lists, ascending (a key sort would put 10 before 2).
// Some conversations have date_time entries for sessions that do not exist; those are ignored.
std::vector<int> locomo_session_numbers(const json& conversation);

// One sample per QA item, id "<sample_id>/q<index>". record {id, conversation_id, question, category,
// answer (a number as its decimal string), adversarial_answer (category 5)}; inputs = inputs_of(the
// conversation) + {question}.
std::vector<Sample> load_locomo(const std::filesystem::path& path, LocomoInputs inputs_of);

// The record's category and its gold answer: "" for category 5 (scored by abstention, not against a gold);
// a numeric answer (2022) is scored as its string, as Python's str(answer).
int locomo_category(const Sample& sample);
std::string locomo_gold(const Sample& sample);

// A LoCoMo grade: `prediction` (none when empty) scored against the sample's gold by `score` (the two
// tasks' graders::locomo_score / locomo_paper_score), the question's category in the details.
using LocomoScore = double (*)(int category, std::string_view prediction, std::string_view gold);
Grade locomo_grade(const Sample& sample, const std::string& prediction, LocomoScore score);

}  // namespace kvbench::tasks
