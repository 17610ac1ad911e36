// Bad tokenizer files and inputs: one kvbench::Error naming the file and the field.
#include <fstream>

#include "common/error.h"
#include "common/json_file.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

using kvbench::Tokenizer;

namespace {

struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& name) : path(kvbench::testing::scratch_path("tokerr_" + name)) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  void write(const std::string& file, const std::string& text) const { std::ofstream(path / file) << text; }
};

kvbench::json valid_tokenizer() {
  return {{"added_tokens", kvbench::json::array({{{"id", 2}, {"content", "<s>"}, {"special", true}}})},
          {"normalizer", nullptr},
          {"pre_tokenizer", nullptr},
          {"post_processor", nullptr},
          {"decoder", nullptr},
          {"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"ab", 3}}}, {"merges", {"a b"}}}}};
}

// Loading `document` (with an optional tokenizer_config) fails naming the file and every fragment.
void check_load_error(const kvbench::json& document, const std::vector<std::string>& fragments,
                      const kvbench::json& config = nullptr) {
  ScratchDir dir("case");
  dir.write("tokenizer.json", document.dump());
  if (!config.is_null()) dir.write("tokenizer_config.json", config.dump());
  try {
    Tokenizer::load(dir.path);
    FAIL("expected kvbench::Error");
  } catch (const kvbench::Error& e) {
    const std::string message = e.what();
    for (const auto& fragment : fragments) CHECK_THAT(message, Catch::Contains(fragment));
  }
}

}  // namespace

TEST_CASE("the valid base document loads (so the error cases below fail for their one defect)", "[tokenizer][errors]") {
  ScratchDir dir("valid");
  dir.write("tokenizer.json", valid_tokenizer().dump());
  CHECK(Tokenizer::load(dir.path).encode("ab<s>a") == std::vector<std::int64_t>{3, 2, 0});
}

TEST_CASE("missing tokenizer.json names the file", "[tokenizer][errors]") {
  ScratchDir dir("missing");
  CHECK_THROWS_WITH(Tokenizer::load(dir.path), Catch::Contains((dir.path / "tokenizer.json").string()));
}

TEST_CASE("truncated tokenizer.json names the file and byte offset", "[tokenizer][errors]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const std::string full = kvbench::read_text_file(kvbench::testing::shared_dir() / "models/stories260K/tokenizer.json");
  ScratchDir dir("truncated");
  dir.write("tokenizer.json", full.substr(0, full.size() / 2));
  CHECK_THROWS_WITH(Tokenizer::load(dir.path), Catch::Contains("tokenizer.json: malformed JSON at byte"));
}

TEST_CASE("unsupported pipeline stages name the field", "[tokenizer][errors]") {
  auto document = valid_tokenizer();
  document["model"]["type"] = "WordPiece";
  check_load_error(document, {"tokenizer.json", "\"model.type\"", "WordPiece"});

  document = valid_tokenizer();
  document["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "BertNormalizer"}}}}};
  check_load_error(document, {"tokenizer.json", "\"normalizer.normalizers[1].type\"", "BertNormalizer"});

  document = valid_tokenizer();
  document["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "("}}}, {"behavior", "Isolated"}, {"invert", false}};
  check_load_error(document, {"\"pre_tokenizer.pattern\"", "invalid regex"});

  document = valid_tokenizer();
  document["decoder"] = {{"type", "WordPiece"}};
  check_load_error(document, {"\"decoder.type\"", "WordPiece"});
}

TEST_CASE("unknown forms of known stages name the field", "[tokenizer][errors]") {
  const auto with = [](const char* stage, kvbench::json value) {
    auto document = valid_tokenizer();
    document[stage] = std::move(value);
    return document;
  };
  check_load_error(with("pre_tokenizer", {{"type", "Sequence"},
                                          {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", true}},
                                                             {{"type", "UnicodeScripts"}}}}}),
                   {"tokenizer.json", "\"pre_tokenizer.pretokenizers[1].type\"", "unsupported type \"UnicodeScripts\""});
  check_load_error(with("pre_tokenizer", {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "Merged"},
                                          {"invert", false}}),
                   {"\"pre_tokenizer.behavior\"", "unsupported behavior \"Merged\""});
  check_load_error(with("pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Glob", "*"}}}, {"behavior", "Removed"},
                                          {"invert", false}}),
                   {"\"pre_tokenizer.pattern\"", "{\"String\": ...} or {\"Regex\": ...}"});
  check_load_error(with("pre_tokenizer", {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "Removed"}}),
                   {"missing field \"pre_tokenizer.invert\""});
  check_load_error(with("pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "_"}, {"prepend_scheme", "sometimes"}}),
                   {"\"pre_tokenizer.prepend_scheme\"", "sometimes"});
  check_load_error(with("pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "ab"}}),
                   {"\"pre_tokenizer.replacement\"", "single character"});
  check_load_error(with("pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "_"}, {"add_prefix_space", false},
                                          {"prepend_scheme", "always"}}),
                   {"\"pre_tokenizer.add_prefix_space\"", "does not match"});
  check_load_error(with("pre_tokenizer", {{"type", "Digits"}}), {"missing field \"pre_tokenizer.individual_digits\""});
  check_load_error(with("normalizer", {{"type", "Replace"}, {"pattern", {{"Regex", "[a-"}}}, {"content", ""}}),
                   {"\"normalizer.pattern\"", "invalid regex"});
  check_load_error(with("normalizer", {{"type", "Strip"}, {"strip_left", "yes"}, {"strip_right", true}}),
                   {"\"normalizer.strip_left\"", "true or false"});
  check_load_error(with("normalizer", {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAA"}}),
                   {"\"normalizer.type\"", "Precompiled"});
  check_load_error(with("decoder", {{"type", "Sequence"}, {"decoders", {{{"type", "ByteFallback"}}, {{"type", "CTC"}}}}}),
                   {"\"decoder.decoders[1].type\"", "CTC"});
  check_load_error(with("decoder", {{"type", "Strip"}, {"content", "ab"}, {"start", 1}, {"stop", 0}}),
                   {"\"decoder.content\"", "single character"});
}

TEST_CASE("malformed model fields name the field", "[tokenizer][errors]") {
  auto document = valid_tokenizer();
  document["model"].erase("vocab");
  check_load_error(document, {"tokenizer.json", "\"model.vocab\""});

  document = valid_tokenizer();
  document["model"]["merges"] = {"a b", "b c"};
  check_load_error(document, {"\"model.merges[1]\"", "vocabulary"});

  document = valid_tokenizer();
  document["added_tokens"][0].erase("content");
  check_load_error(document, {"\"added_tokens[0].content\""});
}

TEST_CASE("special tokens unknown to tokenizer.json name tokenizer_config.json", "[tokenizer][errors]") {
  check_load_error(valid_tokenizer(), {"tokenizer_config.json", "\"eos_token\"", "</s>"}, {{"eos_token", "</s>"}});
}

TEST_CASE("invalid UTF-8 input is an error, not garbage ids", "[tokenizer][errors]") {
  ScratchDir dir("utf8");
  dir.write("tokenizer.json", valid_tokenizer().dump());
  CHECK_THROWS_WITH(Tokenizer::load(dir.path).encode("a\xC3"), Catch::Contains("invalid UTF-8 at byte 1"));
}
