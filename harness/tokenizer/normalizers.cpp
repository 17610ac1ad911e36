// tokenizer.json's normalizer stages (HF tokenizers' normalizers/*.rs): each maps the whole text.
#include <memory>

#include "tokenizer/pipeline.h"
#include "tokenizer/text_pattern.h"
#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace kvbench {

using tokenizer_json::Node;
using pipeline_detail::is_white_space;

namespace {

// Bytes of the leading (or trailing) run of White_Space characters.
std::size_t leading_space_bytes(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto decoded = utf8::decode(text, pos);
    if (!is_white_space(decoded.code_point)) break;
    pos += decoded.length;
  }
  return pos;
}

std::size_t trailing_space_bytes(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0) {
    std::size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    if (!is_white_space(utf8::decode(text, start).code_point)) break;
    end = start;
  }
  return text.size() - end;
}

}  // namespace

Normalizer::Normalizer(const Node& node) {
  pipeline_detail::for_each_stage(node, "normalizers", [this](const Node& stage) { add(stage); });
}

void Normalizer::add(const Node& stage) {
  const std::string type = stage.type();
  if (type == "NFC") {
    steps_.emplace_back([](std::string text) { return unicode::to_nfc(text); });
  } else if (type == "NFD") {
    steps_.emplace_back([](std::string text) { return unicode::to_nfd(text); });
  } else if (type == "NFKC") {
    steps_.emplace_back([](std::string text) { return unicode::to_nfkc(text); });
  } else if (type == "NFKD") {
    steps_.emplace_back([](std::string text) { return unicode::to_nfkd(text); });
  } else if (type == "Lowercase") {
    steps_.emplace_back([](std::string text) { return unicode::to_lowercase(text); });
  } else if (type == "Prepend") {
    steps_.emplace_back([prefix = stage.at("prepend").string()](std::string text) {
      return text.empty() ? text : prefix + text;  // HF leaves an empty string empty
    });
  } else if (type == "Replace") {
    steps_.emplace_back([pattern = TextPattern::from_json(stage.at("pattern")),
                         content = stage.at("content").string()](std::string text) {
      return pattern->replace(text, content);
    });
  } else if (type == "Strip") {
    const bool left = stage.at("strip_left").boolean(), right = stage.at("strip_right").boolean();
    steps_.emplace_back([left, right](std::string text) {
      if (right) text.resize(text.size() - trailing_space_bytes(text));
      if (left) text.erase(0, leading_space_bytes(text));
      return text;
    });
  } else {
    stage.unsupported_type();
  }
}

std::string Normalizer::apply(std::string_view text) const {
  std::string out(text);
  for (const auto& step : steps_) out = step(std::move(out));
  return out;
}

}  // namespace kvbench
