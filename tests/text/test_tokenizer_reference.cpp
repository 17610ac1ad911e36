// Byte-level BPE (Qwen3, Llama 3) and chat templates against the implementations researchers use:
// HF `tokenizers` (ids and decode, 50 000 seeded varied strings) and transformers' Jinja
// `apply_chat_template`, run by tests/peers/reference_tokenize.py in the peers' environment.
#include <array>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "common/json_file.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

namespace {

// The peer's cases for the tokenizer files in `directory` (a tokenizer.json, and tokenizer_config.json for --chat).
std::vector<kvbench::json> reference_cases(const std::filesystem::path& directory, const std::string& argument) {
  const auto script = kvbench::testing::source_dir() / "tests/peers/reference_tokenize.py";
  const std::string output = kvbench::testing::run_command("'" + kvbench::testing::peer_python() + "' '" + script.string() + "' '" +
                                         directory.string() + "' " + argument);
  std::vector<kvbench::json> cases;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) cases.push_back(kvbench::json::parse(line));
  return cases;
}

// kvbench's `tokenizer` against HF tokenizers reading `reference` (its tokenizer.json) on 50 000 strings.
void compare_with_reference(const kvbench::Tokenizer& tokenizer, const std::filesystem::path& reference,
                            const std::string& label) {
  const auto cases = reference_cases(reference, "50000");
  REQUIRE(cases.size() == 50000);
  std::size_t mismatches = 0;
  for (const auto& c : cases) {
    const auto text = c["text"].get<std::string>();
    const auto expected = c["ids"].get<std::vector<std::int64_t>>();
    const auto ids = tokenizer.encode(text, false);
    const auto decoded = tokenizer.decode(expected, false);
    if (ids == expected && decoded == c["decoded"].get<std::string>()) continue;
    if (++mismatches <= 5) {
      INFO("text: " << kvbench::json(text).dump());
      CHECK(ids == expected);
      CHECK(decoded == c["decoded"].get<std::string>());
    }
  }
  std::cout << "| tokenizer " << label << " vs HF tokenizers | " << cases.size() << " strings | ids and decode identical "
            << cases.size() - mismatches << " |\n";
  CHECK(mismatches == 0);
}

// kvbench's chat template against transformers' apply_chat_template on `reference`'s tokenizer_config.json.
void compare_chat_with_reference(const kvbench::Tokenizer& tokenizer, const std::filesystem::path& reference,
                                 const std::string& label) {
  REQUIRE(tokenizer.has_chat_template());
  const auto cases = reference_cases(reference, "--chat");
  REQUIRE(cases.size() == 16);
  std::size_t identical = 0;
  for (const auto& c : cases) {
    kvbench::Conversation conversation;
    for (const auto& m : c["messages"]) conversation.push_back({m["role"], m["content"]});
    INFO("messages: " << c["messages"].dump() << ", add_generation_prompt " << c["add_generation_prompt"]
                      << ", enable_thinking " << c["enable_thinking"]);
    const bool same = tokenizer.apply_chat_template(conversation, c["add_generation_prompt"], c["enable_thinking"]) ==
                      c["text"].get<std::string>();
    CHECK(same);
    identical += same;
  }
  std::cout << "| chat template " << label << " vs transformers apply_chat_template | " << cases.size()
            << " renderings | byte-identical " << identical << " |\n";
}

void compare_shared_with_reference(const std::string& name) {
  KVBENCH_REQUIRE_SHARED("tokenizers/" + name);
  if (!kvbench::testing::peer_available("tokenizers")) return;
  const auto directory = kvbench::testing::shared_dir() / "tokenizers" / name;
  compare_with_reference(kvbench::Tokenizer::load(directory), directory, name);
}

void compare_shared_chat_with_reference(const std::string& name) {
  KVBENCH_REQUIRE_SHARED("tokenizers/" + name);
  if (!kvbench::testing::peer_available("transformers")) return;
  const auto directory = kvbench::testing::shared_dir() / "tokenizers" / name;
  compare_chat_with_reference(kvbench::Tokenizer::load(directory), directory, name);
}

// The tokenizer SmolLM2's GGUF was converted from, written by HF tokenizers from the GGUF's vocabulary and
// merges with the published pipeline (tests/peers/reference_gguf_tokenizer.py); empty when unavailable.
std::filesystem::path smollm2_reference_tokenizer() {
  const auto gguf = kvbench::testing::smollm2_gguf();
  if (!kvbench::testing::cached_model_available(gguf) || !kvbench::testing::peer_available("gguf")) return {};
  const auto directory = kvbench::testing::scratch_path("smollm2_tokenizer");
  const auto script = kvbench::testing::source_dir() / "tests/peers/reference_gguf_tokenizer.py";
  kvbench::testing::run_command("'" + kvbench::testing::peer_python() + "' '" + script.string() + "' '" + gguf.string() +
                                "' '" + directory.string() + "'");
  REQUIRE(std::filesystem::exists(directory / "tokenizer.json"));
  return directory;
}

}  // namespace

TEST_CASE("Qwen3 tokenizer matches HF tokenizers on 50 000 varied strings", "[tokenizer][reference]") {
  compare_shared_with_reference("qwen3");
}

TEST_CASE("Llama 3 tokenizer matches HF tokenizers on 50 000 varied strings", "[tokenizer][reference]") {
  compare_shared_with_reference("llama3");
}

TEST_CASE("Llama 3 chat template renders as transformers' apply_chat_template", "[tokenizer][chat]") {
  compare_shared_chat_with_reference("llama3");
}

TEST_CASE("Qwen3 chat template renders as transformers' apply_chat_template", "[tokenizer][chat]") {
  compare_shared_chat_with_reference("qwen3");
}

TEST_CASE("SmolLM2's chat template read from its GGUF renders as transformers' apply_chat_template",
          "[tokenizer][chat][gguf]") {
  const auto reference = smollm2_reference_tokenizer();
  if (reference.empty() || !kvbench::testing::peer_available("transformers")) return;
  const auto tokenizer = kvbench::Tokenizer::load(kvbench::testing::smollm2_gguf());
  compare_chat_with_reference(tokenizer, reference, "smollm2 (GGUF)");
  CHECK(tokenizer.eos_ids() == std::vector<std::int64_t>{2});  // <|im_end|>, as the GGUF's eos_token_id
  CHECK(tokenizer.bos_id() == std::optional<std::int64_t>{1});
  CHECK(tokenizer.encode("Hi", true) == tokenizer.encode("Hi", false));  // add_bos_token is false
}
