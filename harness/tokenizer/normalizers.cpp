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
  // Mappings of whole characters keep the first character where it was.
  const auto mapping = [this](std::string (*map)(std::string_view)) {
    steps_.emplace_back([map](NormalizedText& t) { t.text = map(t.text); });
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
      if (!t.text.empty()) t.text.insert(0, prefix);  // HF leaves an empty string empty
    });
  } else if (type == "Replace") {
    steps_.emplace_back([pattern = TextPattern::from_json(stage.at("pattern")),
                         content = stage.at("content").string()](NormalizedText& t) {
      const auto spans = pattern->spans(t.text);
      // Replacement text stands where its match stood; nothing does when a leading match is deleted.
      if (content.empty() && !spans.empty() && spans.front().is_match && spans.front().end > 0)
        t.starts_at_origin = false;
      t.text = TextPattern::replace(t.text, spans, content);
    });
  } else if (type == "Strip") {
    const bool left = stage.at("strip_left").boolean(), right = stage.at("strip_right").boolean();
    steps_.emplace_back([left, right](NormalizedText& t) {
      if (right) t.text.resize(t.text.size() - trailing_space_bytes(t.text));
      const std::size_t leading = left ? leading_space_bytes(t.text) : 0;
      if (leading > 0) {
        t.text.erase(0, leading);
        t.starts_at_origin = false;
      }
    });
  } else {
    stage.unsupported_type();
  }
}

NormalizedText Normalizer::apply(std::string_view text) const {
  NormalizedText out{std::string(text)};
  for (const auto& step : steps_) step(out);
  return out;
}

}  // namespace kvbench
