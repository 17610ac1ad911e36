// tokenizer_config.json's chat_template text (any bytes), recognised and rendered.
#include "fuzz_support.h"
#include "tokenizer/chat_template.h"

using namespace kvbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = fuzz::split(fuzz::text(data, size));  // template, message (no structured binding:
                                                           // clang 14 cannot capture one in a lambda)
  fuzz::expect_clean([&] {
    const ChatTemplate chat(std::string(parts.first), "<s>");
    const Conversation messages = {{"system", "Be brief."}, {"user", std::string(parts.second)}};
    (void)chat.render(messages, true, false);
    (void)chat.render(messages, false, true);
  });
  return 0;
}
