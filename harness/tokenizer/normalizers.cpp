// tokenizer.json's normalizer stages (HF tokenizers' normalizers/*.rs): each maps the whole text.
#include <algorithm>
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
  // Character mappings: the origin is what the first character maps to (up to the end of the character
  // it ends in, should a composition with what follows have made that longer).
  const auto mapping = [this](std::string (*map)(std::string_view)) {
    steps_.emplace_back([map](NormalizedText& t) {
      std::size_t origin = map(std::string_view(t.text).substr(0, t.origin_bytes)).size();
      t.text = map(t.text);
      while (origin < t.text.size() && (static_cast<unsigned char>(t.text[origin]) & 0xC0) == 0x80) ++origin;
      t.origin_bytes = std::min(origin, t.text.size());
    });
  };
  if (type == "NFC") {
    mapping(unicode::to_nfc);
  } else if (type == "NFD") {
    mapping(unicode::to_nfd);
  } else if (type == "NFKC") {
    mapping(unicode::to_nfkc);
  } else if (type == "NFKD") {
    mapping(unicode::to_nfkd);
  } else if (type == "Lowercase") {
    mapping(unicode::to_lowercase);
  } else if (type == "Prepend") {
    steps_.emplace_back([prefix = stage.at("prepend").string()](NormalizedText& t) {
      if (t.text.empty()) return;  // HF leaves an empty string empty
      t.text.insert(0, prefix);      // aligned with the first character, wherever that stood
      if (t.origin_bytes > 0) t.origin_bytes += prefix.size();
    });
  } else if (type == "Replace") {
    steps_.emplace_back([pattern = TextPattern::from_json(stage.at("pattern")),
                         content = stage.at("content").string()](NormalizedText& t) {
      const auto spans = pattern->spans(t.text);
      // Replacement text stands where its match started: the origin keeps what replaced or survived of it.
      std::size_t origin = 0;
      for (const auto& span : spans) {
        if (span.start >= t.origin_bytes) break;
        origin += span.is_match ? content.size() : std::min(span.end, t.origin_bytes) - span.start;
      }
      t.text = TextPattern::replace(t.text, spans, content);
      t.origin_bytes = origin;
    });
  } else if (type == "Strip") {
    const bool left = stage.at("strip_left").boolean(), right = stage.at("strip_right").boolean();
    steps_.emplace_back([left, right](NormalizedText& t) {
      if (right) t.text.resize(t.text.size() - trailing_space_bytes(t.text));
      const std::size_t leading = left ? leading_space_bytes(t.text) : 0;
      t.origin_bytes = origin_within(t.origin_bytes, leading, t.text.size() - leading);
      t.text.erase(0, leading);
    });
  } else {
    stage.unsupported_type();
  }
}

NormalizedText Normalizer::apply(std::string_view text) const {
  NormalizedText out{std::string(text), text.empty() ? 0 : utf8::decode(text, 0).length};
  for (const auto& step : steps_) step(out);
  return out;
}

}  // namespace kvbench
