// The stages tokenizer.json declares around its model, with HF tokenizers' semantics byte for byte:
//   normalizer (normalizers.cpp): NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace (String or Regex),
//     Strip, Sequence;
//   pre_tokenizer (pre_tokenizers.cpp): ByteLevel (add_prefix_space, use_regex: GPT-2's pattern), Split
//     (String or Regex, every behavior, invert), Digits, Metaspace (replacement, prepend_scheme always /
//     first / never, split), Punctuation, Whitespace, WhitespaceSplit, Sequence;
//   post_processor (pipeline.cpp): TemplateProcessing for single sequences, ByteLevel (offsets only);
//   decoder (decoders.cpp): ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, Sequence.
// Each is built from its JSON node (null = identity) and rejects types and settings it does not know,
// naming the file and field.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/json_path.h"

namespace kvbench {

// Metaspace's prepend_scheme "first" prepends to a piece whose original offset is 0 in HF: one whose first
// character HF aligns with the input's first character. Those characters are the leading `origin_bytes` of
// a text: what the input's first character became, and what was prepended to it (0 once it was deleted).
// (Counted from the first character's own mapping; a piece cannot start inside a character, so a
// composition that extends it changes nothing.)
std::size_t origin_within(std::size_t origin_bytes, std::size_t piece_start, std::size_t piece_length);

struct NormalizedText {
  std::string text;
  std::size_t origin_bytes;
};

class Normalizer {
 public:
  explicit Normalizer(const tokenizer_json::Node& node);
  NormalizedText apply(std::string_view text) const;

 private:
  void add(const tokenizer_json::Node& stage);
  std::vector<std::function<void(NormalizedText&)>> steps_;
};

// The byte-level alphabet (GPT-2's bytes_to_unicode): the UTF-8 text of the character standing for `byte`,
// and back.
const std::string& byte_level_symbol(unsigned char byte);
std::optional<unsigned char> byte_level_byte(char32_t symbol);

// A piece of text on its way through the pre-tokenizer, with its origin bytes (see NormalizedText).
struct PreToken {
  std::string text;
  std::size_t origin_bytes;
};

class PreTokenizer {
 public:
  using Step = std::function<void(PreToken, std::vector<PreToken>&)>;  // appends the pieces of one piece

  explicit PreTokenizer(const tokenizer_json::Node& node);
  // Splits normalized text into words, already mapped to the model's alphabet (empty words dropped).
  std::vector<std::string> split(std::string_view text, std::size_t origin_bytes) const;

 private:
  void add(const tokenizer_json::Node& stage);
  std::vector<Step> steps_;
};

class PostProcessor {
 public:
  explicit PostProcessor(const tokenizer_json::Node& node);
  void add_special_tokens(std::vector<std::int64_t>& ids) const;

 private:
  std::vector<std::int64_t> prefix_, suffix_;  // TemplateProcessing "single": specials around $A
};

class Decoder {
 public:
  explicit Decoder(const tokenizer_json::Node& node);
  std::string decode(std::vector<std::string> tokens) const;

 private:
  using Step = std::function<std::vector<std::string>(std::vector<std::string>)>;  // HF's decode_chain
  void add(const tokenizer_json::Node& stage);
  std::vector<Step> steps_;
  bool has_decoder_ = false;
};

namespace pipeline_detail {

// Calls `add` for each stage of a "Sequence" stage's `sequence_field` (sequences nest, as in HF), or for the
// node itself. (The recursion follows tokenizer.json's nesting, never the text tokenized.)
template <class AddStage>
void for_each_stage(const tokenizer_json::Node& node, const char* sequence_field, const AddStage& add) {
  if (node.value.is_null()) return;
  if (node.type() != "Sequence") return add(node);
  const auto list = node.at(sequence_field);
  for (std::size_t i = 0; i < list.array().size(); ++i) for_each_stage(list.at(i), sequence_field, add);
}

// A stage's single-character field (Metaspace's replacement, Strip's content), as UTF-8.
std::string single_character(const tokenizer_json::Node& field);

// Metaspace's prepend_scheme (pre-tokenizer and decoder), or the older add_prefix_space.
enum class PrependScheme { Always, First, Never };
PrependScheme metaspace_prepend_scheme(const tokenizer_json::Node& stage);

// Unicode White_Space (Rust's char::is_whitespace, which HF's Strip, WhitespaceSplit and added tokens use).
bool is_white_space(char32_t c);

}  // namespace pipeline_detail

}  // namespace kvbench
