// LoCoMo as the counter-causal paper's code runs it (`locomo-paper`; issue "Recipes true to the papers",
// item 9), for its Figure 5. Same samples as `locomo` (tasks/locomo.h); what differs:
// - prompt (raw): a system part naming the two speakers, then "Input: <conversation>", the question and
//   "Answer:"; category 5 asks for "no information available" before the question;
// - context: per session (numeric order) a line "[<date_time>]" when the date exists, then one line
//   "<speaker>: <text>" per turn, plus " [shared image: <blip_caption>]" when there is a caption; all
//   lines joined by "\n";
// - scoring: the whole stripped generation (not its first line) with graders::locomo_paper_score.
// The paper does not quote its max-token setting to us: 32 new tokens as `locomo`.
#include <fmt/format.h>

#include "tasks/graders/f1.h"
#include "tasks/locomo.h"
#include "tasks/task_support.h"

namespace kvbench::tasks {

namespace {

std::string system_part(const std::string& speaker1, const std::string& speaker2) {
  return "You are an AI assistant tasked with analyzing a conversation between " + speaker1 + " and " + speaker2 +
         ". Based on the provided conversation sessions, answer the question accurately. Focus on recalling past "
         "facts, user preferences, and temporal relationships. Answer the question using exact words from the "
         "conversation when possible.";
}

constexpr const char* kAbstentionRule =
    "If the answer cannot be found in the conversation, respond with \"no information available\".\n";

bool has_text(const json& object, const std::string& name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() && !it->get<std::string>().empty();
}

std::string turn_line(const json& turn, const RecordFields& where) {
  std::string line = where.string(turn, "speaker") + ": " + where.string(turn, "text");
  if (has_text(turn, "blip_caption")) line += " [shared image: " + turn.at("blip_caption").get<std::string>() + "]";
  return line;
}

// The conversation's lines and its first two distinct speakers in order of appearance.
json conversation_inputs(const json& conversation, const RecordFields& where) {
  const auto numbers = locomo_session_numbers(conversation);
  if (numbers.empty()) where.fail("the conversation has no session_N lists");
  std::string text;
  std::vector<std::string> speakers;
  const auto add_line = [&](const std::string& line) { text += (text.empty() ? "" : "\n") + line; };
  for (int n : numbers) {
    const std::string date_key = fmt::format("session_{}_date_time", n);
    if (has_text(conversation, date_key)) add_line("[" + conversation.at(date_key).get<std::string>() + "]");
    const RecordFields session_where = where.nested(fmt::format("session_{}", n));
    const json& turns = conversation.at(fmt::format("session_{}", n));
    for (std::size_t t = 0; t < turns.size(); ++t) {
      const RecordFields turn_where = session_where.nested(fmt::format("turn {}", t));
      add_line(turn_line(turns[t], turn_where));
      const std::string speaker = turn_where.string(turns[t], "speaker");
      if (speakers.size() < 2 && (speakers.empty() || speakers[0] != speaker)) speakers.push_back(speaker);
    }
  }
  speakers.resize(2);
  return {{"conversation", text},
          {"speaker1", speakers[0].empty() ? "Person A" : speakers[0]},
          {"speaker2", speakers[1].empty() ? "Person B" : speakers[1]}};
}

class LocomoPaper : public Task {
 public:
  std::string name() const override { return "locomo-paper"; }
  std::string default_dataset() const override { return "locomo/locomo10.json"; }

  std::vector<Sample> load(const std::filesystem::path& path) const override {
    return load_locomo(path, conversation_inputs);
  }

  // instruction_prompt joins the system part and the rest with "\n\n", as the paper's strings do.
  Prompt prompt(const Sample& sample) const override {
    const bool adversarial = locomo_category(sample) == kLocomoAdversarialCategory;
    const std::string body = "Input: " + input_string(sample, "conversation") + "\n\n" +
                             (adversarial ? kAbstentionRule : "") + "Question: " + input_string(sample, "question") +
                             "\nAnswer:";
    return instruction_prompt(system_part(input_string(sample, "speaker1"), input_string(sample, "speaker2")), body);
  }

  Grade grade(const Sample& sample, std::string_view output) const override {
    return locomo_grade(sample, trimmed(output), graders::locomo_paper_score);
  }

  DecodingDefaults defaults() const override { return {/*max_new_tokens=*/32}; }
};

}  // namespace

std::unique_ptr<Task> make_locomo_paper_task() { return std::make_unique<LocomoPaper>(); }

}  // namespace kvbench::tasks
