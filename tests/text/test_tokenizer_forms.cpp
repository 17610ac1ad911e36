// The tokenizer.json forms causal LMs ship (GPT-2's ByteLevel regex, Digits, Metaspace, Punctuation,
// Whitespace, Split with every behavior, the Unicode normalizers, Lowercase, Replace, Strip, Prepend, and
// their decoders) against HF `tokenizers`: tests/peers/reference_tokenizer_forms.py writes each form's
// tokenizer.json with tokenizers' own Python API (a small trained BPE) and its ids and decodes of the seeded
// strings, and decodes of seeded sequences of any ids; kvbench loads the file and must agree on every one. SmolLM2's own form runs on its real
// vocabulary, read from the cached model's GGUF.
#include <iostream>
#include <sstream>

#include "common/json_file.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

namespace {

struct FormCases {
  std::string name;
  std::vector<kvbench::json> cases;
};

// Runs the peer script with `arguments` after the scratch directory; its records grouped by form, in order.
std::vector<FormCases> reference_forms(const std::filesystem::path& scratch, const std::string& arguments) {
  const auto script = kvbench::testing::source_dir() / "tests/peers/reference_tokenizer_forms.py";
  const std::string output = kvbench::testing::run_command("'" + kvbench::testing::peer_python() + "' '" +
                                                           script.string() + "' '" + scratch.string() + "' " + arguments);
  std::vector<FormCases> forms;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    auto record = kvbench::json::parse(line);
    const std::string form = record["form"];
    if (forms.empty() || forms.back().name != form) forms.push_back({form, {}});
    forms.back().cases.push_back(std::move(record));
  }
  return forms;
}

void compare_form(const kvbench::Tokenizer& tokenizer, const FormCases& form, std::size_t expected_count,
                  const std::string& label) {
  INFO("form " << label);
  REQUIRE(form.cases.size() == expected_count);
  std::size_t mismatches = 0;
  for (const auto& c : form.cases) {
    const auto text = c["text"].get<std::string>();
    const auto expected = c["ids"].get<std::vector<std::int64_t>>();
    const auto ids = tokenizer.encode(text, false);
    const auto decoded = tokenizer.decode(expected, false);
    const auto random_decoded = tokenizer.decode(c["random_ids"].get<std::vector<std::int64_t>>(), false);
    if (ids == expected && decoded == c["decoded"].get<std::string>() &&
        random_decoded == c["random_decoded"].get<std::string>())
      continue;
    if (++mismatches <= 3) {
      INFO("text: " << kvbench::json(text).dump() << ", random ids: " << c["random_ids"].dump());
      CHECK(ids == expected);
      CHECK(decoded == c["decoded"].get<std::string>());
      CHECK(random_decoded == c["random_decoded"].get<std::string>());
    }
  }
  std::cout << "| tokenizer " << label << " vs HF tokenizers | " << form.cases.size()
            << " strings | ids and decode identical " << form.cases.size() - mismatches << " |\n";
  CHECK(mismatches == 0);
}

}  // namespace

// 5 000 strings per form (not the standard 50 000): 39 forms, each trained, must stay fast on 2 cores.
TEST_CASE("tokenizer.json forms written by HF tokenizers match it on 5 000 varied strings each",
          "[tokenizer][reference][forms]") {
  if (!kvbench::testing::peer_available("tokenizers")) return;
  const auto scratch = kvbench::testing::scratch_path("tokenizer_forms");
  const auto forms = reference_forms(scratch, "synthetic 5000");
  REQUIRE(forms.size() == 39);
  for (const auto& form : forms) compare_form(kvbench::Tokenizer::load(scratch / form.name), form, 5000, form.name);
}

// Read both ways: its tokenizer.json as HF saves it, and the GGUF's own metadata (tokenizer/gguf_vocab.cpp).
TEST_CASE("SmolLM2's tokenizer (real vocabulary from its GGUF) matches HF tokenizers on 50 000 varied strings",
          "[tokenizer][reference][forms][gguf]") {
  if (!kvbench::testing::peer_available("tokenizers") || !kvbench::testing::peer_available("gguf")) return;
  const auto gguf = kvbench::testing::smollm2_gguf();
  if (!kvbench::testing::cached_model_available(gguf)) return;
  const auto scratch = kvbench::testing::scratch_path("tokenizer_smollm2");
  const auto forms = reference_forms(scratch, "smollm2 '" + gguf.string() + "' 50000");
  REQUIRE(forms.size() == 1);
  compare_form(kvbench::Tokenizer::load(scratch / forms[0].name), forms[0], 50000, "smollm2 (tokenizer.json)");
  compare_form(kvbench::Tokenizer::load(gguf), forms[0], 50000, "smollm2 (read from the GGUF)");
}
