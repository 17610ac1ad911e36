// LoCoMo as the counter-causal paper's code runs it (`locomo-paper`; issue "Recipes true to the papers",
// item 9), for its Figure 5. Same samples as `locomo` (tasks/locomo.h); what differs:
// - prompt (raw): a system part naming the two speakers, then "Input: <conversation>", the question and
//   "Answer:"; category 5 asks for "no information available" before the question;
// - context: per session (numeric order) a line "[<date_time>]" when the date exists, then one line
//   "<speaker>: <text>" per turn, plus " [shared image: <blip_caption>]" when there is a caption; all
//   lines joined by "\n";
// - scoring: the whole stripped generation (not its first line) with graders::locomo_paper_score.
// A turn without speaker is its bare text; a session that is not a list is skipped (tasks.py).
// Protocol::Reference differs only in system_text: the system part with both names empty, and its "\n\n".
// The paper does not quote its max-token setting to us: 32 new tokens as `locomo`.
#include <fmt/format.h>

#include <algorithm>

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

// A string field as dialog.get(name, ""): "" when absent or not a string (null).
std::string text_or_empty(const json& object, const std::string& name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// "<speaker>: <text>", or the bare text for a turn without speaker; " [shared image: <caption>]" after it.
std::string turn_line(const json& turn) {
  const std::string speaker = text_or_empty(turn, "speaker"), caption = text_or_empty(turn, "blip_caption");
  std::string line = (speaker.empty() ? "" : speaker + ": ") + text_or_empty(turn, "text");
  if (!caption.empty()) line += " [shared image: " + caption + "]";
  return line;
}

// The conversation's lines and its first two distinct speakers in order of appearance ("Person A",
// "Person B" when there are fewer), as _build_locomo_conversation makes them.
json conversation_inputs(const json& conversation, const RecordFields& where) {
  std::string text;
  std::vector<std::string> speakers;
  const auto add_line = [&](const std::string& line) { text += (text.empty() ? "" : "\n") + line; };
  for (int n : locomo_session_numbers(conversation)) {  // only the sessions that are lists
    const std::string date = text_or_empty(conversation, fmt::format("session_{}_date_time", n));
    if (!date.empty()) add_line("[" + date + "]");
    const json& turns = conversation.at(fmt::format("session_{}", n));
    for (std::size_t t = 0; t < turns.size(); ++t) {
      const json& turn = where.nested(fmt::format("session_{} turn {}", n, t)).expect(turns[t], json::value_t::object, "a turn");
      add_line(turn_line(turn));
      const std::string speaker = text_or_empty(turn, "speaker");
      if (!speaker.empty() && std::find(speakers.begin(), speakers.end(), speaker) == speakers.end())
        speakers.push_back(speaker);
    }
  }
  return {{"conversation", text},
          {"speaker1", speakers.size() > 0 ? speakers[0] : "Person A"},
          {"speaker2", speakers.size() > 1 ? speakers[1] : "Person B"}};
}

class LocomoPaper : public Task {
 public:
  explicit LocomoPaper(Protocol protocol) : protocol_(protocol) {}
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
    Prompt prompt =
        instruction_prompt(system_part(input_string(sample, "speaker1"), input_string(sample, "speaker2")), body);
    // evaluate.py's --auto_frozen counts LOCOMO_SYSTEM.format(speaker1="", speaker2=""), the same for all.
    if (protocol_ == Protocol::Reference) prompt.system_text = system_part("", "") + "\n\n";
    return prompt;
  }

  Grade grade(const Sample& sample, std::string_view output) const override {
    return locomo_grade(sample, trimmed(output), graders::locomo_paper_score);
  }

  DecodingDefaults defaults() const override { return {/*max_new_tokens=*/32}; }

 private:
  Protocol protocol_;
};

}  // namespace

std::unique_ptr<Task> make_locomo_paper_task(Protocol protocol) { return std::make_unique<LocomoPaper>(protocol); }

}  // namespace kvbench::tasks
