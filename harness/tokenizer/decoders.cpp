// tokenizer.json's decoder stages (HF tokenizers' decoders/*.rs): each maps the list of token strings
// (HF's decode_chain); the final text is their concatenation.
#include <memory>
#include <optional>

#include "tokenizer/pipeline.h"
#include "tokenizer/text_pattern.h"
#include "tokenizer/utf8.h"

namespace kvbench {

using tokenizer_json::Node;
using Tokens = std::vector<std::string>;

namespace {

// All tokens to bytes through the byte alphabet (tokens with other characters, e.g. added
// tokens, as their own bytes), then one string with invalid UTF-8 replaced.
Tokens decode_byte_level(const Tokens& tokens) {
  std::string bytes;
  for (const auto& token : tokens) {
    std::string mapped;
    bool all_mapped = true;
    for (std::size_t pos = 0; pos < token.size() && all_mapped;) {
      const auto decoded = utf8::decode(token, pos);
      const auto byte = decoded.length ? byte_level_byte(decoded.code_point) : std::nullopt;
      all_mapped = byte.has_value();
      if (all_mapped) mapped += static_cast<char>(*byte);
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
Tokens decode_byte_fallback(const Tokens& tokens) {
  Tokens out;
  std::string pending;
  const auto flush = [&] {
    if (pending.empty()) return;
    if (utf8::repair(pending) == pending) {
      out.push_back(pending);
    } else {
      out.insert(out.end(), pending.size(), "\xEF\xBF\xBD");
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

// Strip: up to `start` leading and `stop` trailing copies of the character `piece` removed from each token.
std::string strip(std::string token, const std::string& piece, std::int64_t start, std::int64_t stop) {
  for (std::int64_t i = 0; i < start && token.compare(0, piece.size(), piece) == 0; ++i) token.erase(0, piece.size());
  for (std::int64_t i = 0; i < stop && token.size() >= piece.size() &&
                           token.compare(token.size() - piece.size(), piece.size(), piece) == 0;
       ++i)
    token.erase(token.size() - piece.size());
  return token;
}

// Metaspace: the replacement character becomes a space, except in the first token, where every one of
// them is dropped unless prepend_scheme is "never" (HF drops all there, not only a leading one).
Tokens decode_metaspace(Tokens tokens, const std::string& replacement, bool drop_in_first) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string out;
    for (std::size_t pos = 0;;) {
      const auto found = tokens[i].find(replacement, pos);
      out.append(tokens[i], pos, found == std::string::npos ? std::string::npos : found - pos);
      if (found == std::string::npos) break;
      if (i != 0 || !drop_in_first) out += ' ';
      pos = found + replacement.size();
    }
    tokens[i] = std::move(out);
  }
  return tokens;
}

}  // namespace

Decoder::Decoder(const Node& node) {
  has_decoder_ = !node.value.is_null();
  pipeline_detail::for_each_stage(node, "decoders", [this](const Node& stage) { add(stage); });
}

void Decoder::add(const Node& stage) {
  const std::string type = stage.type();
  if (type == "ByteLevel") {
    steps_.emplace_back(decode_byte_level);
  } else if (type == "ByteFallback") {
    steps_.emplace_back(decode_byte_fallback);
  } else if (type == "Fuse") {
    steps_.emplace_back([](Tokens tokens) {
      std::string fused;
      for (const auto& token : tokens) fused += token;
      return Tokens{fused};
    });
  } else if (type == "Replace") {
    steps_.emplace_back([pattern = TextPattern::from_json(stage.at("pattern")),
                         content = stage.at("content").string()](Tokens tokens) {
      for (auto& token : tokens) token = pattern->replace(token, content);
      return tokens;
    });
  } else if (type == "Strip") {
    const std::string piece = pipeline_detail::single_character(stage.at("content"));
    const std::int64_t start = stage.at("start").integer(), stop = stage.at("stop").integer();
    steps_.emplace_back([piece, start, stop](Tokens tokens) {
      for (auto& token : tokens) token = strip(std::move(token), piece, start, stop);
      return tokens;
    });
  } else if (type == "Metaspace") {
    const std::string replacement = pipeline_detail::single_character(stage.at("replacement"));
    const bool never = pipeline_detail::metaspace_prepend_scheme(stage) == pipeline_detail::PrependScheme::Never;
    steps_.emplace_back([replacement, never](Tokens tokens) { return decode_metaspace(std::move(tokens), replacement, !never); });
  } else {
    stage.unsupported_type();
  }
}

std::string Decoder::decode(Tokens tokens) const {
  if (!has_decoder_) {  // HF joins with spaces when tokenizer.json has no decoder
    std::string joined;
    for (std::size_t i = 0; i < tokens.size(); ++i) joined += (i ? " " : "") + tokens[i];
    return joined;
  }
  for (const auto& step : steps_) tokens = step(std::move(tokens));
  std::string text;
  for (const auto& token : tokens) text += token;
  return text;
}

}  // namespace kvbench
