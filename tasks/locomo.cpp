// LoCoMo, LongBench-style (`locomo`): one sample per QA item over a whole conversation.
// Context: every session in numeric order, headed by its date and time, one "Speaker: text" line per
// turn; a shared image is written as "[shares <blip_caption>]" after the turn's text. Graded with the
// official task_eval/evaluation.py rules (graders::locomo_score) on the first non-blank line of the
// output, as the official HF-model runner (hf_llm_utils.py) post-processes answers. Category 5
// (adversarial) items have no `answer`; their prompt asks for "no information available" and the score
// is whether the output says so. The category is in the record and in details for per-category reports.
// The loader is shared with the counter-causal paper's protocol (`locomo-paper`, tasks/locomo_paper.cpp).
#include "tasks/locomo.h"

#include <algorithm>
#include <regex>
#include <set>

#include "common/error.h"
#include "common/json_file.h"
#include "tasks/graders/f1.h"
#include "tasks/task_support.h"

namespace kvbench::tasks {

namespace {

constexpr const char* kInstruction =
    "You are given a long conversation between two people that took place over multiple sessions; each session "
    "begins with its date and time. Answer the question that follows the conversation with a short phrase of a "
    "few words, using exact words from the conversation whenever possible. Do not write complete and lengthy "
    "sentences.";
constexpr const char* kAdversarialNote =
    "If the answer cannot be found in the conversation, respond with \"no information available\".";

std::string turn_line(const json& turn, const RecordFields& where) {
  std::string line = where.string(turn, "speaker") + ": " + where.string(turn, "text");
  // Some image turns carry a caption without img_url; the caption is what the text model can see.
  if (turn.contains("blip_caption")) line += " [shares " + where.string(turn, "blip_caption") + "]";
  return line;
}

std::string conversation_text(const json& conversation, const RecordFields& where) {
  const auto numbers = locomo_session_numbers(conversation);
  if (numbers.empty()) where.fail("the conversation has no session_N lists");
  std::string text;
  for (int n : numbers) {
    const RecordFields session_where = where.nested(fmt::format("session_{}", n));
    text += fmt::format("{}Session {} ({}):", text.empty() ? "" : "\n\n", n,
                        where.string(conversation, fmt::format("session_{}_date_time", n)));
    const json& turns = conversation.at(fmt::format("session_{}", n));
    for (std::size_t t = 0; t < turns.size(); ++t) {
      text += "\n" + turn_line(turns[t], session_where.nested(fmt::format("turn {}", t)));
    }
  }
  return text;
}

Sample qa_sample(const std::string& conversation_id, std::size_t index, const json& qa, const json& inputs,
                 const RecordFields& where) {
  const long long category = where.integer(qa, "category");
  if (category < 1 || category > kLocomoAdversarialCategory) where.fail(fmt::format("category {} is not 1-5", category));
  Sample sample;
  sample.id = fmt::format("{}/q{}", conversation_id, index);
  const std::string question = where.string(qa, "question");
  sample.record = {{"id", sample.id}, {"conversation_id", conversation_id}, {"question", question},
                   {"category", category}};
  // Categories 1-4 are scored against `answer` (a string, or a number such as 2022); category 5 is not,
  // and its gold is `adversarial_answer` (two items also carry an `answer`).
  if (category != kLocomoAdversarialCategory || qa.contains("answer")) sample.record["answer"] = where.text(qa, "answer");
  if (category == kLocomoAdversarialCategory) sample.record["adversarial_answer"] = where.text(qa, "adversarial_answer");
  sample.inputs = inputs;
  sample.inputs["question"] = question;
  return sample;
}

RecordFields record_fields(const Sample& sample) { return RecordFields(fmt::format("sample {}", sample.id), "record"); }

std::string first_nonblank_line(std::string_view output) {
  std::size_t begin = 0;
  while (begin <= output.size()) {
    const std::size_t end = std::min(output.find('\n', begin), output.size());
    const std::string line = trimmed(output.substr(begin, end - begin));
    if (!line.empty()) return line;
    begin = end + 1;
  }
  return "";
}

}  // namespace

std::vector<int> locomo_session_numbers(const json& conversation) {
  static const std::regex kSessionKey("session_([0-9]+)");
  std::vector<int> numbers;
  for (const auto& [key, value] : conversation.items()) {
    std::smatch match;
    if (std::regex_match(key, match, kSessionKey) && value.is_array()) numbers.push_back(std::stoi(match[1]));
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

std::vector<Sample> load_locomo(const std::filesystem::path& path, LocomoInputs inputs_of) {
  const json conversations = read_json_file(path);
  if (!conversations.is_array()) fail("{}: expected a list of conversations", path.string());
  std::vector<Sample> samples;
  std::set<std::string> ids;
  for (std::size_t c = 0; c < conversations.size(); ++c) {
    const std::string conversation_id =
        RecordFields(path, fmt::format("conversation {}", c)).string(conversations[c], "sample_id");
    const RecordFields named(path, fmt::format("conversation {} ({})", c, conversation_id));
    const json inputs = inputs_of(named.object(conversations[c], "conversation"), named);
    const json& qas = named.array(conversations[c], "qa");
    for (std::size_t q = 0; q < qas.size(); ++q) {
      samples.push_back(qa_sample(conversation_id, q, qas[q], inputs, named.nested(fmt::format("qa {}", q))));
      require_new_id(ids, samples.back().id, fmt::format("{}: conversation {}", path.string(), c));
    }
  }
  return samples;
}

int locomo_category(const Sample& sample) {
  return static_cast<int>(record_fields(sample).integer(sample.record, "category"));
}

std::string locomo_gold(const Sample& sample) {
  if (locomo_category(sample) == kLocomoAdversarialCategory) return "";
  return record_fields(sample).text(sample.record, "answer");
}

Grade locomo_grade(const Sample& sample, const std::string& prediction, LocomoScore score) {
  const int category = locomo_category(sample);
  Grade grade;
  if (!prediction.empty()) grade.pred = prediction;
  grade.score = score(category, prediction, locomo_gold(sample));
  grade.details = {{"category", category}};
  return grade;
}

namespace {

class Locomo : public Task {
 public:
  std::string name() const override { return "locomo"; }
  std::string default_dataset() const override { return "locomo/locomo10.json"; }

  std::vector<Sample> load(const std::filesystem::path& path) const override {
    return load_locomo(path, [](const json& conversation, const RecordFields& where) {
      return json{{"conversation", conversation_text(conversation, where)}};
    });
  }

  Prompt prompt(const Sample& sample) const override {
    std::string question = "\n\nQuestion: " + input_string(sample, "question");
    if (locomo_category(sample) == kLocomoAdversarialCategory) question += std::string("\n") + kAdversarialNote;
    return instruction_prompt(kInstruction, input_string(sample, "conversation"), question, "Answer:");
  }

  Grade grade(const Sample& sample, std::string_view output) const override {
    return locomo_grade(sample, first_nonblank_line(output), graders::locomo_score);
  }

  DecodingDefaults defaults() const override { return {/*max_new_tokens=*/32}; }
};

}  // namespace

std::unique_ptr<Task> make_locomo_task() { return std::make_unique<Locomo>(); }

}  // namespace kvbench::tasks
