// LongHealth task 1 (kbressem/LongHealth benchmark_v5.json): one patient's records + a 5-way multiple-
// choice question; the reference's raw prompt; the first A–E letter of the output; greedy, 16 new tokens.
#include <algorithm>

#include "common/error.h"
#include "common/json_file.h"
#include "tasks/graders/multiple_choice.h"
#include "tasks/jsonl.h"
#include "tasks/task_support.h"

namespace kvbench::tasks {

namespace {

constexpr const char* kLetters = "ABCDE";
const std::vector<std::string> kOptionFields = {"answer_a", "answer_b", "answer_c", "answer_d", "answer_e"};

// texts{text_0, text_1, ...} in numeric order (the file's order; a key sort would put text_10 before text_2).
std::vector<std::string> ordered_texts(const json& texts, const std::string& where) {
  if (!texts.is_object() || texts.empty()) fail("{}: \"texts\" must be a non-empty object", where);
  std::vector<std::pair<int, std::string>> numbered;
  for (const auto& [key, value] : texts.items()) {
    const std::string prefix = "text_";
    const std::string suffix = key.substr(std::min(key.size(), prefix.size()));
    if (key.rfind(prefix, 0) != 0 || suffix.empty() || suffix.find_first_not_of("0123456789") != std::string::npos)
      fail("{}: texts key \"{}\" is not of the form text_N", where, key);
    numbered.emplace_back(std::stoi(suffix), string_field(texts, key, where + " texts"));
  }
  std::sort(numbered.begin(), numbered.end());
  std::vector<std::string> ordered;
  for (auto& [number, text] : numbered) ordered.push_back(std::move(text));
  return ordered;
}

// The published file stores the correct option's text in `correct`; the letter is the option it equals.
char correct_letter(const json& question, const std::vector<std::string>& options, const std::string& where) {
  const std::string correct = trimmed(string_field(question, "correct", where));
  std::optional<char> letter;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (trimmed(options[i]) != correct) continue;
    if (letter) fail("{}: \"correct\" matches more than one of answer_a..answer_e", where);
    letter = kLetters[i];
  }
  if (!letter) fail("{}: \"correct\" matches none of answer_a..answer_e", where);
  return *letter;
}

Sample question_sample(const std::string& patient, const json& question, const std::vector<std::string>& texts,
                       const std::string& where) {
  std::vector<std::string> options;
  for (const auto& field : kOptionFields) options.push_back(string_field(question, field, where));
  Sample sample;
  const std::string number = string_field(question, "No", where);
  sample.id = patient + "/q" + number;
  sample.record = {{"id", sample.id},
                   {"answer", std::string(1, correct_letter(question, options, where))},
                   {"patient", patient},
                   {"question_no", number}};
  sample.inputs = {{"question", string_field(question, "question", where)}, {"options", options}, {"texts", texts}};
  return sample;
}

class LongHealth : public Task {
 public:
  std::string name() const override { return "longhealth"; }
  std::string default_dataset() const override { return "longhealth/benchmark_v5.json"; }

  std::vector<Sample> load(const std::filesystem::path& path) const override {
    const json patients = read_json_file(path);
    if (!patients.is_object()) fail("{}: expected an object of patients (patient_XX → record)", path.string());
    std::vector<Sample> samples;
    std::set<std::string> ids;
    for (const auto& [patient, record] : patients.items()) {
      const std::string where = path.string() + ": " + patient;
      const auto texts = ordered_texts(require_field(record, "texts", where), where);
      const json& questions = require_field(record, "questions", where);
      if (!questions.is_array()) fail("{}: \"questions\" must be a list", where);
      for (std::size_t q = 0; q < questions.size(); ++q) {
        const std::string question_where = fmt::format("{} question {}", where, q + 1);
        samples.push_back(question_sample(patient, questions[q], texts, question_where));
        require_new_id(ids, samples.back().id, question_where);
      }
    }
    return samples;
  }

  Prompt prompt(const Sample& sample) const override {
    std::string records;
    for (const auto& text : sample.inputs.at("texts")) records += (records.empty() ? "" : "\n\n") + text.get<std::string>();
    const std::string body = "Patient Records:\n" + records + "\n\nQuestion: " + input_string(sample, "question") +
                             "\n\n" + lettered_options(sample);
    return instruction_prompt(
        "Read the following patient records and answer the multiple-choice question by responding with only "
        "the letter of the correct answer (A, B, C, D, or E).",
        body, "Answer:");
  }

  Grade grade(const Sample& sample, std::string_view output) const override {
    const std::string gold = record_string(sample, "answer");
    Grade grade;
    if (auto letter = graders::first_letter(output, kLetters)) {
      grade.pred = std::string(1, *letter);
      grade.score = *grade.pred == gold ? 1.0 : 0.0;
    }
    return grade;
  }

  DecodingDefaults defaults() const override { return {/*max_new_tokens=*/16}; }
};

}  // namespace

std::unique_ptr<Task> make_longhealth_task() { return std::make_unique<LongHealth>(); }

}  // namespace kvbench::tasks
