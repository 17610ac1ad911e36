#include "tokenizer/chat_template.h"

#include <regex>

#include "common/error.h"

namespace kvbench {

namespace {

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }
bool starts_with(const std::string& text, const std::string& prefix) { return text.compare(0, prefix.size(), prefix) == 0; }
bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Python's str.strip(chars) / lstrip / rstrip, as used by the templates.
std::string lstrip(const std::string& text, const char* chars) {
  const auto start = text.find_first_not_of(chars);
  return start == std::string::npos ? "" : text.substr(start);
}
std::string rstrip(const std::string& text, const char* chars) {
  const auto end = text.find_last_not_of(chars);
  return end == std::string::npos ? "" : text.substr(0, end + 1);
}
std::string strip(const std::string& text, const char* chars) { return lstrip(rstrip(text, chars), chars); }
constexpr const char* kWhitespace = " \t\n\r\v\f";  // Jinja's trim (Python str.strip) on ASCII whitespace

// A Qwen2/2.5 or SmolLM2 template writes a fixed system message when the conversation has none, e.g.
// {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
// (SmolLM2's literal holds real line breaks where Qwen's has \n escapes).
std::string default_system_message(const std::string& template_text) {
  static const std::regex literal(R"('<\|im_start\|>system(?:\\n|\n)([^']*)<\|im_end\|>(?:\\n|\n)')");
  std::smatch match;
  if (!std::regex_search(template_text, match, literal)) return "";
  return std::regex_replace(match[1].str(), std::regex(R"(\\n)"), "\n");
}

// An assistant message "<think>\nR\n</think>\n\nA" carries its reasoning R inline; the template's
// split('</think>') takes A after the last </think> and R between the last <think> and the first </think>.
void split_reasoning(const std::string& text, std::string& reasoning, std::string& answer) {
  const auto first_close = text.find("</think>");
  if (first_close == std::string::npos) return;
  const std::string close_tag = "</think>", open_tag = "<think>";
  answer = lstrip(text.substr(text.rfind(close_tag) + close_tag.size()), "\n");
  const std::string before = rstrip(text.substr(0, first_close), "\n");
  const auto open = before.rfind(open_tag);
  reasoning = lstrip(open == std::string::npos ? before : before.substr(open + open_tag.size()), "\n");
}

std::string chatml_turn(const std::string& role, const std::string& content) {
  return "<|im_start|>" + role + "\n" + content + "<|im_end|>\n";
}

void require_chatml_role(const ChatMessage& message) {
  if (message.role != "system" && message.role != "user" && message.role != "assistant")
    fail("chat template: unsupported role \"{}\" (expected system, user or assistant)", message.role);
}

}  // namespace

ChatTemplate::ChatTemplate(const std::string& template_text, std::string bos_token) : bos_token_(std::move(bos_token)) {
  if (template_text.empty()) return;
  family_ = Family::Unknown;
  if (contains(template_text, "<|im_start|>")) {
    family_ = contains(template_text, "enable_thinking") ? Family::Qwen3 : Family::ChatMl;
    if (family_ == Family::ChatMl) default_system_ = default_system_message(template_text);
  } else if (contains(template_text, "<|start_header_id|>") && contains(template_text, "<|eot_id|>") &&
             !contains(template_text, "Cutting Knowledge Date")) {  // Llama 3.1+ adds a dated system block
    family_ = Family::Llama3;
  }
}

std::string ChatTemplate::render(const Conversation& messages, bool add_generation_prompt, bool enable_thinking) const {
  if (messages.empty()) fail("chat template: the conversation has no messages");
  switch (family_) {
    case Family::ChatMl: return render_chatml(messages, add_generation_prompt);
    case Family::Qwen3: return render_qwen3(messages, add_generation_prompt, enable_thinking);
    case Family::Llama3: return render_llama3(messages);
    case Family::None: fail("tokenizer has no chat_template (tokenizer_config.json); use a raw prompt");
    case Family::Unknown: break;
  }
  fail("tokenizer_config.json: field \"chat_template\": template not recognised (kvbench renders Qwen ChatML and "
       "Llama 3 templates)");
}

// Qwen2/2.5: ChatML with an optional default system message.
std::string ChatTemplate::render_chatml(const Conversation& messages, bool add_generation_prompt) const {
  std::string out;
  if (messages.front().role != "system" && !default_system_.empty()) out += chatml_turn("system", default_system_);
  for (const auto& message : messages) {
    require_chatml_role(message);
    out += chatml_turn(message.role, message.content);
  }
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

// Qwen3: assistant turns after the last user query keep their <think> block (the last one always gets
// one); earlier turns lose it; enable_thinking=false pre-fills an empty think block.
std::string ChatTemplate::render_qwen3(const Conversation& messages, bool add_generation_prompt,
                                       bool enable_thinking) const {
  std::size_t last_query = messages.size() - 1;
  for (std::size_t i = messages.size(); i-- > 0;) {
    const auto& m = messages[i];
    const bool tool_response = starts_with(m.content, "<tool_response>") && ends_with(m.content, "</tool_response>");
    if (m.role == "user" && !tool_response) {
      last_query = i;
      break;
    }
  }
  std::string out;
  if (messages.front().role == "system") out += chatml_turn("system", messages.front().content);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto& message = messages[i];
    require_chatml_role(message);
    if (message.role == "system") {
      if (i > 0) out += chatml_turn("system", message.content);
      continue;
    }
    if (message.role == "user") {
      out += chatml_turn("user", message.content);
      continue;
    }
    std::string content = message.content, reasoning;
    split_reasoning(message.content, reasoning, content);
    const bool last = i + 1 == messages.size();
    if (i > last_query && (last || !reasoning.empty())) {
      out += "<|im_start|>assistant\n<think>\n" + strip(reasoning, "\n") + "\n</think>\n\n" + lstrip(content, "\n");
    } else {
      out += "<|im_start|>assistant\n" + content;
    }
    out += "<|im_end|>\n";
  }
  if (add_generation_prompt) {
    out += "<|im_start|>assistant\n";
    if (!enable_thinking) out += "<think>\n\n</think>\n\n";
  }
  return out;
}

// Llama 3: BOS, then one header block per message with trimmed content. The template appends the
// assistant header unconditionally, so add_generation_prompt does not apply.
std::string ChatTemplate::render_llama3(const Conversation& messages) const {
  std::string out = bos_token_;
  for (const auto& message : messages)
    out += "<|start_header_id|>" + message.role + "<|end_header_id|>\n\n" + strip(message.content, kWhitespace) +
           "<|eot_id|>";
  return out + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

}  // namespace kvbench
