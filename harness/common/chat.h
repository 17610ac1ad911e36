// A chat message, shared by tasks (which build conversations) and tokenizers (which render templates).
#pragma once
#include <string>
#include <vector>

namespace kvbench {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

using Conversation = std::vector<ChatMessage>;

}  // namespace kvbench
