// The chat templates kvbench renders natively. tokenizer_config.json's "chat_template" is Jinja; rather
// than interpreting Jinja, the known template families are recognised by their text and rendered
// here exactly as their template does (checked against the templates in the tests).
#pragma once
#include <string>

#include "common/chat.h"

namespace kvbench {

class ChatTemplate {
 public:
  ChatTemplate() = default;  // no template
  // `bos_token` is what the template's {{ bos_token }} expands to.
  ChatTemplate(const std::string& template_text, std::string bos_token);

  bool known() const { return family_ != Family::None && family_ != Family::Unknown; }
  std::string render(const Conversation& messages, bool add_generation_prompt, bool enable_thinking) const;

 private:
  enum class Family { None, Unknown, ChatMl, Qwen3, Llama3 };
  std::string render_chatml(const Conversation& messages, bool add_generation_prompt) const;
  std::string render_qwen3(const Conversation& messages, bool add_generation_prompt, bool enable_thinking) const;
  std::string render_llama3(const Conversation& messages) const;

  Family family_ = Family::None;
  std::string default_system_;  // ChatML (Qwen2/2.5): system message used when the conversation has none
  std::string bos_token_;
};

}  // namespace kvbench
