// What the pipeline stages share (the byte-level alphabet, field readers), and the post-processor.
#include "tokenizer/pipeline.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "common/error.h"
#include "tokenizer/utf8.h"

namespace kvbench {

using tokenizer_json::Node;

namespace {

// GPT-2's reversible byte -> printable character map used by ByteLevel (pre-tokenizer and decoder).
struct ByteAlphabet {
  std::array<std::string, 256> byte_to_char;
  std::unordered_map<char32_t, unsigned char> char_to_byte;

  ByteAlphabet() {
    char32_t next_unprintable = 256;
    for (int byte = 0; byte < 256; ++byte) {
      const bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
      const char32_t cp = printable ? static_cast<char32_t>(byte) : next_unprintable++;
      utf8::append(byte_to_char[byte], cp);
      char_to_byte.emplace(cp, static_cast<unsigned char>(byte));
    }
  }
};

const ByteAlphabet& byte_alphabet() {
  static const ByteAlphabet alphabet;
  return alphabet;
}

}  // namespace

const std::string& byte_level_symbol(unsigned char byte) { return byte_alphabet().byte_to_char[byte]; }

std::optional<unsigned char> byte_level_byte(char32_t symbol) {
  const auto& table = byte_alphabet().char_to_byte;
  const auto it = table.find(symbol);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

std::size_t origin_within(std::size_t origin_bytes, std::size_t piece_start, std::size_t piece_length) {
  return origin_bytes > piece_start ? std::min(origin_bytes - piece_start, piece_length) : 0;
}

namespace pipeline_detail {

std::string single_character(const Node& field) {
  const std::string text = field.string();
  if (text.empty() || utf8::decode(text, 0).length != text.size()) field.fail_here("expected a single character");
  return text;
}

PrependScheme metaspace_prepend_scheme(const Node& stage) {
  // HF rejects add_prefix_space false beside a scheme other than "never"; without a scheme, "always".
  const bool legacy_no_prefix = stage.has("add_prefix_space") && !stage.at("add_prefix_space").boolean();
  const std::string name = stage.has("prepend_scheme") ? stage.at("prepend_scheme").string() : "always";
  if (legacy_no_prefix && name != "never")
    stage.at("add_prefix_space").fail_here("add_prefix_space does not match declared prepend_scheme");
  if (legacy_no_prefix || name == "never") return PrependScheme::Never;
  if (name == "always") return PrependScheme::Always;
  if (name == "first") return PrependScheme::First;
  stage.at("prepend_scheme").fail_here(fmt::format("unsupported prepend_scheme \"{}\"", name));
}

bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

}  // namespace pipeline_detail

// ---------------------------------------------------------------- post-processor

PostProcessor::PostProcessor(const Node& node) {
  if (node.value.is_null()) return;
  const std::string type = node.type();
  if (type == "ByteLevel") return;  // only adjusts offsets, which kvbench does not track
  if (type != "TemplateProcessing") node.unsupported_type();
  const auto single = node.at("single");
  const auto specials = node.at("special_tokens");
  bool after_sequence = false;
  for (std::size_t i = 0; i < single.array().size(); ++i) {
    const auto piece = single.at(i);
    if (piece.has("Sequence")) {
      if (piece.at("Sequence").at("id").string() != "A") piece.fail_here("only sequence A is supported");
      after_sequence = true;
      continue;
    }
    const std::string name = piece.at("SpecialToken").at("id").string();
    const auto ids = specials.at(name).at("ids");
    for (std::size_t k = 0; k < ids.array().size(); ++k) (after_sequence ? suffix_ : prefix_).push_back(ids.at(k).integer());
  }
}

void PostProcessor::add_special_tokens(std::vector<std::int64_t>& ids) const {
  ids.insert(ids.begin(), prefix_.begin(), prefix_.end());
  ids.insert(ids.end(), suffix_.begin(), suffix_.end());
}

}  // namespace kvbench
