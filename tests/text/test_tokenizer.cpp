// Tokenizer checks against independent references: llama2.c's own encoding (stories260K
// reference/greedy.json), tinystories-656k's SOURCE.md, and hand-derived expectations.
#include <fstream>

#include "common/error.h"
#include "common/json_file.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

using kvbench::Tokenizer;
using Ids = std::vector<std::int64_t>;

namespace {

// A scratch directory holding the given tokenizer files, removed at scope exit.
struct TempTokenizerDir {
  std::filesystem::path path;
  explicit TempTokenizerDir(const std::string& name)
      : path(kvbench::testing::scratch_path("tok_" + name)) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempTokenizerDir() { std::filesystem::remove_all(path); }
  void write(const std::string& file, const std::string& text) const { std::ofstream(path / file) << text; }
};

// A tiny hand-written BPE: merges in rank order; no normalizer or pre-tokenizer, so the text is one word.
kvbench::json tiny_bpe(const kvbench::json& merges) {
  return {{"added_tokens", kvbench::json::array()},
          {"normalizer", nullptr},
          {"pre_tokenizer", nullptr},
          {"post_processor", nullptr},
          {"decoder", nullptr},
          {"model",
           {{"type", "BPE"},
            {"vocab", {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}}},
            {"merges", merges}}}};
}

}  // namespace

TEST_CASE("BPE applies merges by rank", "[tokenizer]") {
  TempTokenizerDir dir("ranks");
  dir.write("tokenizer.json", tiny_bpe({"a b", "ab c"}).dump());
  CHECK(Tokenizer::load(dir.path).encode("abcab") == Ids{5, 3});  // a b -> ab (twice), then ab c -> abc
  dir.write("tokenizer.json", tiny_bpe(kvbench::json::array({kvbench::json::array({"b", "c"}), kvbench::json::array({"a", "b"})})).dump());
  CHECK(Tokenizer::load(dir.path).encode("abcab") == Ids{0, 4, 3});  // b c outranks a b
}

TEST_CASE("stories260K encodes like llama2.c and decodes like HF", "[tokenizer][stories]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const auto model_dir = kvbench::testing::shared_dir() / "models/stories260K";
  const auto tokenizer = Tokenizer::load(model_dir);
  CHECK(tokenizer.encode("Once upon a time") == Ids{1, 403, 407, 261, 378});
  CHECK(tokenizer.bos_id() == 1);
  CHECK(tokenizer.eos_ids() == Ids{2});
  CHECK(tokenizer.vocab_size() == 512);
  CHECK_FALSE(tokenizer.has_chat_template());

  const auto reference = kvbench::read_json_file(model_dir / "reference/greedy.json");
  REQUIRE(reference["cases"].size() == 4);
  for (const auto& c : reference["cases"]) {
    const auto prompt = c["prompt"].get<std::string>();
    INFO("prompt: " << prompt);
    CHECK(tokenizer.encode(prompt) == c["prompt_tokens"].get<Ids>());
    CHECK(tokenizer.decode(c["tokens"].get<Ids>()) == c["text"].get<std::string>());
  }
}

TEST_CASE("tinystories-656k encodes as its SOURCE.md records", "[tokenizer][stories]") {
  KVBENCH_REQUIRE_SHARED("models/tinystories-656k");
  const auto tokenizer = Tokenizer::load(kvbench::testing::shared_dir() / "models/tinystories-656k");
  CHECK(tokenizer.encode("Once upon a time, there was a little cat") == Ids{1, 80, 147, 201, 282, 215, 286, 229, 476});
  CHECK(tokenizer.bos_id() == 1);
  CHECK(tokenizer.eos_ids() == Ids{2});
}

TEST_CASE("byte-level tokenizers read special ids from tokenizer_config.json", "[tokenizer]") {
  KVBENCH_REQUIRE_SHARED("tokenizers");
  const auto qwen = Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers/qwen3");
  CHECK_FALSE(qwen.bos_id().has_value());
  CHECK(qwen.eos_ids() == Ids{151645});  // <|im_end|>
  CHECK(qwen.vocab_size() == 151669);
  // Qwen3's post_processor is ByteLevel: no specials added; written specials are matched.
  CHECK(qwen.encode("<|im_start|>user", true) == Ids{151644, 872});
  CHECK(qwen.decode({151644, 872}) == "user");
  CHECK(qwen.decode({151644, 872}, false) == "<|im_start|>user");

  const auto llama = Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers/llama3");
  CHECK(llama.bos_id() == 128000);
  CHECK(llama.eos_ids() == Ids{128001});
  CHECK(llama.vocab_size() == 128256);
  // From tokenizers/llama3/SOURCE.md (node reference check).
  CHECK(llama.encode("Hello, my dog is cute. 12345") == Ids{9906, 11, 856, 5679, 374, 19369, 13, 220, 4513, 1774});
}

TEST_CASE("long documents tokenize in linear time", "[tokenizer]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const auto tokenizer = Tokenizer::load(kvbench::testing::shared_dir() / "models/stories260K");
  std::string story;
  while (story.size() < 400000) story += "Once upon a time, there was a little girl named Lily. ";
  const auto ids = tokenizer.encode(story, false);
  CHECK(ids.size() > 50000);
  CHECK(tokenizer.decode(ids) == story);
}

// Model outputs that repeat one token thousands of times go through every pre-tokenizer and normalizer in
// bounded time and memory (no input-controlled recursion, no regex stack exhausted).
TEST_CASE("hostile repetitions pass every pre-tokenizer and normalizer", "[tokenizer]") {
  using kvbench::json;
  json vocab = {{"\u2581", 256}};
  for (int byte = 0; byte < 256; ++byte) vocab[fmt::format("<0x{:02X}>", byte)] = byte;
  const std::vector<json> pre_tokenizers = {
      {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}},
      {{"type", "Digits"}, {"individual_digits", false}},
      {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "first"}, {"split", true}},
      {{"type", "Punctuation"}, {"behavior", "Contiguous"}},
      {{"type", "Whitespace"}},
      {{"type", "WhitespaceSplit"}},
      {{"type", "Split"}, {"pattern", {{"Regex", R"(\s+(?!\S)|\s+|(?:'s)+)"}}}, {"behavior", "MergedWithNext"}, {"invert", true}}};
  const json normalizer = {{"type", "Sequence"},
                           {"normalizers", {{{"type", "NFKC"}}, {{"type", "NFD"}}, {{"type", "Lowercase"}},
                                            {{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}},
                                            {{"type", "Replace"}, {"pattern", {{"Regex", R"(\s*)"}}}, {"content", " "}}}}};
  std::vector<std::string> inputs;
  for (const std::string unit : {" ", "1", "'s", "\u0301", "a", "...", "\u2581", "\n\n", "\uFB03", "\u0130"}) {
    std::string text;
    while (text.size() < 200000) text += unit;
    inputs.push_back(text);
  }
  for (const auto& pre_tokenizer : pre_tokenizers) {
    INFO("pre_tokenizer " << pre_tokenizer.dump());
    TempTokenizerDir dir("hostile");
    dir.write("tokenizer.json", json{{"added_tokens", json::array()},
                                     {"normalizer", normalizer},
                                     {"pre_tokenizer", pre_tokenizer},
                                     {"post_processor", nullptr},
                                     {"decoder", nullptr},
                                     {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()},
                                                {"byte_fallback", true}}}}
                                        .dump());
    const auto tokenizer = Tokenizer::load(dir.path);
    for (const auto& text : inputs) CHECK_NOTHROW(tokenizer.encode(text, false));  // white space alone may give no ids
  }
}
