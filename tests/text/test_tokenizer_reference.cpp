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

std::vector<kvbench::json> reference_cases(const std::string& name, const std::string& argument) {
  const auto script = kvbench::testing::source_dir() / "tests/peers/reference_tokenize.py";
  const auto directory = kvbench::testing::shared_dir() / "tokenizers" / name;
  const std::string output = kvbench::testing::run_command("'" + kvbench::testing::peer_python() + "' '" + script.string() + "' '" +
                                         directory.string() + "' " + argument);
  std::vector<kvbench::json> cases;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) cases.push_back(kvbench::json::parse(line));
  return cases;
}

void compare_with_reference(const std::string& name) {
  KVBENCH_REQUIRE_SHARED("tokenizers/" + name);
  if (!kvbench::testing::peer_available("tokenizers")) return;
  const auto tokenizer = kvbench::Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers" / name);
  const auto cases = reference_cases(name, "50000");
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
  std::cout << "| tokenizer " << name << " vs HF tokenizers | " << cases.size() << " strings | ids and decode identical "
            << cases.size() - mismatches << " |\n";
  CHECK(mismatches == 0);
}

void compare_chat_with_reference(const std::string& name) {
  KVBENCH_REQUIRE_SHARED("tokenizers/" + name);
  if (!kvbench::testing::peer_available("transformers")) return;
  const auto tokenizer = kvbench::Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers" / name);
  REQUIRE(tokenizer.has_chat_template());
  const auto cases = reference_cases(name, "--chat");
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
  std::cout << "| chat template " << name << " vs transformers apply_chat_template | " << cases.size()
            << " renderings | byte-identical " << identical << " |\n";
}

}  // namespace

TEST_CASE("Qwen3 tokenizer matches HF tokenizers on 50 000 varied strings", "[tokenizer][reference]") {
  compare_with_reference("qwen3");
}

TEST_CASE("Llama 3 tokenizer matches HF tokenizers on 50 000 varied strings", "[tokenizer][reference]") {
  compare_with_reference("llama3");
}

TEST_CASE("Llama 3 chat template renders as transformers' apply_chat_template", "[tokenizer][chat]") {
  compare_chat_with_reference("llama3");
}

TEST_CASE("Qwen3 chat template renders as transformers' apply_chat_template", "[tokenizer][chat]") {
  compare_chat_with_reference("qwen3");
}
