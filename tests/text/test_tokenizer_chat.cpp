// Chat templates: Qwen3 expectations written by hand from the chat_template text in
// tokenizers/qwen3/tokenizer_config.json (the JS reference's Jinja engine cannot parse it);
// Llama 3 is compared with the JS reference in test_tokenizer_reference.cpp.
#include <fstream>

#include "common/error.h"
#include "common/json_file.h"
#include "test_support.h"
#include "tokenizer/unicode.h"
#include "tokenizer/tokenizer.h"

using kvbench::Conversation;
using kvbench::Tokenizer;

TEST_CASE("Qwen3 chat template: system + user, thinking on", "[tokenizer][chat]") {
  KVBENCH_REQUIRE_SHARED("tokenizers/qwen3");
  const auto qwen = Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers/qwen3");
  REQUIRE(qwen.has_chat_template());
  const Conversation conversation{{"system", "You are helpful."}, {"user", "What is 2+2?"}};
  CHECK(qwen.apply_chat_template(conversation) ==
        "<|im_start|>system\nYou are helpful.<|im_end|>\n"
        "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
        "<|im_start|>assistant\n");
}

TEST_CASE("Qwen3 chat template: user only, enable_thinking false pre-fills an empty think block", "[tokenizer][chat]") {
  KVBENCH_REQUIRE_SHARED("tokenizers/qwen3");
  const auto qwen = Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers/qwen3");
  CHECK(qwen.apply_chat_template({{"user", "Hi"}}, true, false) ==
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  CHECK(qwen.apply_chat_template({{"user", "Hi"}}, false) == "<|im_start|>user\nHi<|im_end|>\n");
}

TEST_CASE("Qwen3 chat template: multi-turn drops old reasoning, keeps the last turn's think block", "[tokenizer][chat]") {
  KVBENCH_REQUIRE_SHARED("tokenizers/qwen3");
  const auto qwen = Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers/qwen3");
  const Conversation conversation{{"user", "Q1"},
                                  {"assistant", "<think>\nR1\n</think>\n\nA1"},
                                  {"user", "Q2"},
                                  {"assistant", "A2"}};
  // Turn 1 precedes the last user query: reasoning removed. Turn 3 is last and after it: gets a
  // think block (empty reasoning). Template: '<think>\n' + '' + '\n</think>\n\n' + 'A2'.
  CHECK(qwen.apply_chat_template(conversation, false) ==
        "<|im_start|>user\nQ1<|im_end|>\n"
        "<|im_start|>assistant\nA1<|im_end|>\n"
        "<|im_start|>user\nQ2<|im_end|>\n"
        "<|im_start|>assistant\n<think>\n\n</think>\n\nA2<|im_end|>\n");
}

TEST_CASE("ChatML template with a default system message (Qwen2.5 style)", "[tokenizer][chat]") {
  KVBENCH_REQUIRE_SHARED("tokenizers/qwen3");
  const auto dir = kvbench::testing::scratch_path("tok_chatml");
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kvbench::testing::shared_dir() / "tokenizers/qwen3/tokenizer.json", dir / "tokenizer.json",
                             std::filesystem::copy_options::overwrite_existing);
  // The system-message part of Qwen2.5's template, as written there.
  const std::string chat_template =
      "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + messages[0]['content'] + "
      "'<|im_end|>\\n' }}{%- else %}{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a "
      "helpful assistant.<|im_end|>\\n' }}{%- endif %}";
  std::ofstream(dir / "tokenizer_config.json") << kvbench::json{{"chat_template", chat_template}}.dump();
  const auto tokenizer = Tokenizer::load(dir);
  CHECK(tokenizer.apply_chat_template({{"user", "Hi"}}) ==
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  CHECK(tokenizer.apply_chat_template({{"system", "S"}, {"user", "Hi"}}) ==
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a tokenizer without chat template refuses to render one", "[tokenizer][chat]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const auto tokenizer = Tokenizer::load(kvbench::testing::shared_dir() / "models/stories260K");
  CHECK_THROWS_AS(tokenizer.apply_chat_template({{"user", "Hi"}}), kvbench::Error);
}

TEST_CASE("NFC composes, reorders and respects composition exclusions", "[tokenizer]") {
  using kvbench::unicode::to_nfc;
  CHECK(to_nfc("Cafe\u0301") == "Caf\u00E9");
  CHECK(to_nfc("\u1100\u1161\u11A8") == "\uAC01");           // Hangul L V T -> one syllable
  CHECK(to_nfc("a\u0301\u0323") == "\u1EA1\u0301");          // dot below (220) sorts before acute (230)
  CHECK(to_nfc("\u0958") == "\u0915\u093C");                  // excluded from recomposition
  CHECK(to_nfc("\u212B") == "\u00C5");                        // singleton: ANGSTROM SIGN -> Å
  CHECK(to_nfc("e\u0301\u0301") == "\u00E9\u0301");          // second acute is blocked
}

// Expectations from the Unicode Standard's own examples (UAX #15, figures 3-6) and SpecialCasing.txt.
TEST_CASE("NFD, NFKC and NFKD decompose, Lowercase maps whole characters", "[tokenizer]") {
  using namespace kvbench::unicode;
  CHECK(to_nfd("\u00C5") == "A\u030A");                      // canonical
  CHECK(to_nfd("\uAC01") == "\u1100\u1161\u11A8");            // Hangul, arithmetically
  CHECK(to_nfd("\u1E0B\u0323") == "d\u0323\u0307");          // reordered: dot below (220) before dot above (230)
  CHECK(to_nfd("\uFB01") == "\uFB01");                        // compatibility only: NFD keeps it
  CHECK(to_nfkd("\uFB01") == "fi");
  CHECK(to_nfkc("\u1E9B\u0323") == "\u1E69");                // UAX #15 figure 6: long s with dots -> ṩ
  CHECK(to_nfkd("\u1E9B\u0323") == "s\u0323\u0307");
  CHECK(to_nfkc("\uFDFA").size() == 33);                      // one character, 18 after decomposition
  CHECK(to_nfkc("\u2460\u00BD") == "11\u20442");            // ① ½
  CHECK(to_lowercase("\u0130") == "i\u0307");                 // İ: two characters
  CHECK(to_lowercase("\u03A3\u0391\u03A3") == "\u03C3\u03B1\u03C3");  // no final sigma without context
  CHECK(to_lowercase("\u1E9E") == "\u00DF");                 // ẞ -> ß
  CHECK(to_lowercase("ABC xyz \u00C9") == "abc xyz \u00E9");
}
