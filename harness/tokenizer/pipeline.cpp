#include "tokenizer/pipeline.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>
#include <optional>
#include <unordered_map>

#include "common/error.h"
#include "tokenizer/nfc.h"
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

std::string replace_all(std::string_view text, const std::string& from, const std::string& to) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0;;) {
    const auto found = from.empty() ? std::string_view::npos : text.find(from, pos);
    if (found == std::string_view::npos) {
      out.append(text.substr(pos));
      return out;
    }
    out.append(text.substr(pos, found - pos)).append(to);
    pos = found + from.size();
  }
}

// A Replace stage's pattern: only literal strings are supported.
std::string literal_pattern(const Node& stage) {
  const auto pattern = stage.at("pattern");
  if (!pattern.has("String")) pattern.fail_here("only {\"String\": ...} patterns are supported");
  return pattern.at("String").string();
}

void require_flag(const Node& stage, const std::string& name, bool expected) {
  if (stage.has(name) && stage.at(name).boolean() != expected)
    stage.at(name).fail_here(fmt::format("only {} is supported", expected));
}

// Splits for each element of a "Sequence" stage, or the node itself otherwise.
template <class AddStage>
void for_each_stage(const Node& node, const char* sequence_field, AddStage add) {
  if (node.value.is_null()) return;
  if (node.type() != "Sequence") return add(node);
  const auto list = node.at(sequence_field);
  for (std::size_t i = 0; i < list.array().size(); ++i) add(list.at(i));
}

}  // namespace

const std::string& byte_level_symbol(unsigned char byte) { return byte_alphabet().byte_to_char[byte]; }

// ---------------------------------------------------------------- normalizer

Normalizer::Normalizer(const Node& node) {
  for_each_stage(node, "normalizers", [this](const Node& stage) { add(stage); });
}

void Normalizer::add(const Node& stage) {
  const std::string type = stage.type();
  if (type == "NFC") {
    steps_.push_back({Step::Kind::Nfc, "", ""});
  } else if (type == "Prepend") {
    steps_.push_back({Step::Kind::Prepend, stage.at("prepend").string(), ""});
  } else if (type == "Replace") {
    steps_.push_back({Step::Kind::Replace, literal_pattern(stage), stage.at("content").string()});
  } else {
    stage.unsupported_type();
  }
}

std::string Normalizer::apply(std::string_view text) const {
  std::string out(text);
  for (const auto& step : steps_) {
    switch (step.kind) {
      case Step::Kind::Nfc: out = unicode::to_nfc(out); break;
      case Step::Kind::Prepend:
        if (!out.empty()) out.insert(0, step.text);  // HF leaves an empty string empty
        break;
      case Step::Kind::Replace: out = replace_all(out, step.text, step.replacement); break;
    }
  }
  return out;
}

// ---------------------------------------------------------------- pre-tokenizer

// A PCRE2 pattern compiled for UTF-8 with Unicode properties (\p{L}, \s ... as in HF's Oniguruma).
class SplitRegex {
 public:
  SplitRegex(const std::string& pattern, const Node& where) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP,
                          &error, &offset, nullptr);
    if (!code_) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof message);
      where.fail_here(fmt::format("invalid regex at offset {}: {}", offset, reinterpret_cast<char*>(message)));
    }
    pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);  // without JIT support pcre2_match interprets
  }
  SplitRegex(const SplitRegex&) = delete;
  SplitRegex& operator=(const SplitRegex&) = delete;
  ~SplitRegex() { pcre2_code_free(code_); }

  // Non-overlapping matches as [start, end) byte ranges; `text` must be valid UTF-8.
  std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view text) const {
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
        pcre2_match_data_create_from_pattern(code_, nullptr), &pcre2_match_data_free);
    std::vector<std::pair<std::size_t, std::size_t>> matches;
    const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    for (std::size_t pos = 0; pos < text.size();) {
      const int rc = pcre2_match(code_, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, data.get(), nullptr);
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc < 0) fail("tokenizer: pre-tokenizer regex failed with PCRE2 error {}", rc);
      const PCRE2_SIZE* range = pcre2_get_ovector_pointer(data.get());
      if (range[1] > range[0]) matches.emplace_back(range[0], range[1]);
      pos = range[1] > range[0] ? range[1] : range[1] + utf8::decode(text, range[1]).length;
    }
    return matches;
  }

 private:
  pcre2_code* code_ = nullptr;
};

PreTokenizer::PreTokenizer(const Node& node) {
  for_each_stage(node, "pretokenizers", [this](const Node& stage) { add(stage); });
}

void PreTokenizer::add(const Node& stage) {
  const std::string type = stage.type();
  if (type == "Split") {
    const auto pattern = stage.at("pattern");
    if (!pattern.has("Regex")) pattern.fail_here("only {\"Regex\": ...} patterns are supported");
    if (stage.at("behavior").string() != "Isolated") stage.at("behavior").fail_here("only \"Isolated\" is supported");
    require_flag(stage, "invert", false);
    steps_.push_back({Step::Kind::SplitIsolated, std::make_shared<SplitRegex>(pattern.at("Regex").string(), pattern)});
  } else if (type == "ByteLevel") {
    require_flag(stage, "add_prefix_space", false);
    require_flag(stage, "use_regex", false);
    steps_.push_back({Step::Kind::ByteLevel, nullptr});
  } else {
    stage.unsupported_type();
  }
}

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string> pieces{std::string(text)};
  for (const auto& step : steps_) {
    std::vector<std::string> next;
    for (const auto& piece : pieces) {
      if (step.kind == Step::Kind::ByteLevel) {
        std::string mapped;
        for (unsigned char byte : piece) mapped += byte_alphabet().byte_to_char[byte];
        next.push_back(std::move(mapped));
        continue;
      }
      // Isolated: every match is a piece, and so is every stretch between matches.
      std::size_t done = 0;
      for (const auto& [start, end] : step.regex->find_all(piece)) {
        if (start > done) next.push_back(piece.substr(done, start - done));
        next.push_back(piece.substr(start, end - start));
        done = end;
      }
      if (done < piece.size()) next.push_back(piece.substr(done));
    }
    pieces = std::move(next);
  }
  return pieces;
}

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

// ---------------------------------------------------------------- decoder

Decoder::Decoder(const Node& node) {
  has_decoder_ = !node.value.is_null();
  for_each_stage(node, "decoders", [this](const Node& stage) { add(stage); });
}

void Decoder::add(const Node& stage) {
  const std::string type = stage.type();
  if (type == "ByteLevel") {
    steps_.push_back({Step::Kind::ByteLevel});
  } else if (type == "Replace") {
    steps_.push_back({Step::Kind::Replace, literal_pattern(stage), stage.at("content").string()});
  } else if (type == "ByteFallback") {
    steps_.push_back({Step::Kind::ByteFallback});
  } else if (type == "Fuse") {
    steps_.push_back({Step::Kind::Fuse});
  } else if (type == "Strip") {
    steps_.push_back({Step::Kind::Strip, stage.at("content").string(), "", stage.at("start").integer(),
                      stage.at("stop").integer()});
  } else {
    stage.unsupported_type();
  }
}

namespace {

// All tokens to bytes through the byte alphabet (tokens with other characters, e.g. added
// tokens, as their own bytes), then one string with invalid UTF-8 replaced.
std::vector<std::string> decode_byte_level(const std::vector<std::string>& tokens) {
  const auto& table = byte_alphabet().char_to_byte;
  std::string bytes;
  for (const auto& token : tokens) {
    std::string mapped;
    bool all_mapped = true;
    for (std::size_t pos = 0; pos < token.size() && all_mapped;) {
      const auto decoded = utf8::decode(token, pos);
      const auto it = decoded.length ? table.find(decoded.code_point) : table.end();
      all_mapped = it != table.end();
      if (all_mapped) mapped += static_cast<char>(it->second);
      pos += decoded.length;
    }
    bytes += all_mapped ? mapped : token;
  }
  return {utf8::repair(bytes)};
}

std::optional<unsigned char> byte_token_value(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return std::nullopt;
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int high = hex(token[3]), low = hex(token[4]);
  if (high < 0 || low < 0) return std::nullopt;
  return static_cast<unsigned char>(high * 16 + low);
}

// Runs of <0xNN> tokens become their UTF-8 text, or one U+FFFD per byte when not valid UTF-8 (as HF).
std::vector<std::string> decode_byte_fallback(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  std::string pending;
  const auto flush = [&] {
    if (pending.empty()) return;
    if (utf8::repair(pending) == pending) {
      out.push_back(pending);
    } else {
      for (std::size_t i = 0; i < pending.size(); ++i) out.push_back("\xEF\xBF\xBD");
    }
    pending.clear();
  };
  for (const auto& token : tokens) {
    if (const auto byte = byte_token_value(token)) {
      pending += static_cast<char>(*byte);
    } else {
      flush();
      out.push_back(token);
    }
  }
  flush();
  return out;
}

std::string strip(std::string token, const std::string& piece, std::int64_t start, std::int64_t stop) {
  for (std::int64_t i = 0; i < start && !piece.empty() && token.compare(0, piece.size(), piece) == 0; ++i)
    token.erase(0, piece.size());
  for (std::int64_t i = 0; i < stop && !piece.empty() && token.size() >= piece.size() &&
                           token.compare(token.size() - piece.size(), piece.size(), piece) == 0;
       ++i)
    token.erase(token.size() - piece.size());
  return token;
}

}  // namespace

std::string Decoder::decode(std::vector<std::string> tokens) const {
  if (!has_decoder_) {  // HF joins with spaces when tokenizer.json has no decoder
    std::string joined;
    for (std::size_t i = 0; i < tokens.size(); ++i) joined += (i ? " " : "") + tokens[i];
    return joined;
  }
  for (const auto& step : steps_) {
    switch (step.kind) {
      case Step::Kind::ByteLevel: tokens = decode_byte_level(tokens); break;
      case Step::Kind::ByteFallback: tokens = decode_byte_fallback(tokens); break;
      case Step::Kind::Replace:
        for (auto& token : tokens) token = replace_all(token, step.text, step.replacement);
        break;
      case Step::Kind::Fuse: {
        std::string fused;
        for (const auto& token : tokens) fused += token;
        tokens = {fused};
        break;
      }
      case Step::Kind::Strip:
        for (auto& token : tokens) token = strip(token, step.text, step.start, step.stop);
        break;
    }
  }
  std::string text;
  for (const auto& token : tokens) text += token;
  return text;
}

}  // namespace kvbench
