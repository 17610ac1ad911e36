// LongHealth task 1 (kbressem/LongHealth benchmark_v5.json): one patient's records + a 5-way multiple-
// choice question; the reference's raw prompt; the first A–E letter of the output; greedy, 16 new tokens.
// As the paper's tasks.py (its own task) under both protocols: patients and texts in the file's order, the
// gold letter is the first option equal to `correct` exactly (null when none is). Protocol::Reference
// differs only in system_text: LONGHEALTH_SYSTEM with its "\n\n", what evaluate.py's --auto_frozen counts.
#include "common/error.h"
#include "common/json_file.h"
#include "tasks/graders/multiple_choice.h"
#include "tasks/jsonl.h"
#include "tasks/task_support.h"

namespace kvbench::tasks {

namespace {

constexpr const char* kLetters = "ABCDE";
const std::vector<std::string> kOptionFields = {"answer_a", "answer_b", "answer_c", "answer_d", "answer_e"};

// The patient's texts in the file's order, as tasks.py joins pd["texts"].values() (the published file
// stores text_0, text_1, ... in that order; the order of the keys, not their numbers, decides).
std::vector<std::string> file_order_texts(const nlohmann::ordered_json& texts, const std::string& where) {
  if (!texts.is_object() || texts.empty()) fail("{}: \"texts\" must be a non-empty object", where);
  std::vector<std::string> ordered;
  for (const auto& [key, value] : texts.items()) {
    if (!value.is_string()) fail("{}: texts entry \"{}\" is not a string", where, key);
    ordered.push_back(value.get<std::string>());
  }
  return ordered;
}

// _longhealth_correct_letter: the FIRST option whose text equals `correct` exactly (no trimming); null when
// none does. (A question whose `correct` matches no option is then scored as tasks.py scores it: pred == gold,
// so an output without any A-E letter counts as correct.)
json correct_letter(const json& question, const std::vector<std::string>& options, const std::string& where) {
  const std::string correct = string_field(question, "correct", where);
  for (std::size_t i = 0; i < options.size(); ++i)
    if (options[i] == correct) return std::string(1, kLetters[i]);
  return nullptr;
}

Sample question_sample(const std::string& patient, const json& question, const std::vector<std::string>& texts,
                       const std::string& where) {
  std::vector<std::string> options;
  for (const auto& field : kOptionFields) options.push_back(string_field(question, field, where));
  Sample sample;
  const std::string number = string_field(question, "No", where);
  sample.id = patient + "/q" + number;
  sample.record = {{"id", sample.id},
                   {"answer", correct_letter(question, options, where)},
                   {"patient", patient},
                   {"question_no", number}};
  sample.inputs = {{"question", string_field(question, "question", where)}, {"options", options}, {"texts", texts}};
  return sample;
}

constexpr const char* kInstruction =
    "Read the following patient records and answer the multiple-choice question by responding with only the letter "
    "of the correct answer (A, B, C, D, or E).";

class LongHealth : public Task {
 public:
  explicit LongHealth(Protocol protocol) : protocol_(protocol) {}
  std::string name() const override { return "longhealth"; }
  std::string default_dataset() const override { return "longhealth/benchmark_v5.json"; }

  std::vector<Sample> load(const std::filesystem::path& path) const override {
    // Patients and texts in the file's order, as tasks.py iterates them.
    const nlohmann::ordered_json patients = read_ordered_json_file(path);
    if (!patients.is_object()) fail("{}: expected an object of patients (patient_XX → record)", path.string());
    std::vector<Sample> samples;
    std::set<std::string> ids;
    for (const auto& [patient, ordered_record] : patients.items()) {
      const std::string where = path.string() + ": " + patient;
      const json record = ordered_record;
      require_field(record, "texts", where);  // names the file when it is missing
      const auto texts = file_order_texts(ordered_record.at("texts"), where);
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
    Prompt prompt = instruction_prompt(
        kInstruction, "Patient Records:\n" + records,
        "\n\nQuestion: " + input_string(sample, "question") + "\n\n" + lettered_options(sample), "Answer:");
    if (protocol_ == Protocol::Reference) prompt.system_text = std::string(kInstruction) + "\n\n";  // LONGHEALTH_SYSTEM
    return prompt;
  }

  // _extract_letter (the first A-E character: stripping first changes nothing) == the gold letter, where a
  // null gold (no option equals `correct`) equals no letter, as Python's None == None.
  Grade grade(const Sample& sample, std::string_view output) const override {
    return letter_grade(sample, graders::first_letter(output, kLetters));
  }

  DecodingDefaults defaults() const override { return {/*max_new_tokens=*/16}; }

 private:
  Protocol protocol_;
};

}  // namespace

std::unique_ptr<Task> make_longhealth_task(Protocol protocol) { return std::make_unique<LongHealth>(protocol); }

}  // namespace kvbench::tasks
