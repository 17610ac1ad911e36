// tokenizer.json's pre_tokenizer stages (HF tokenizers' pre_tokenizers/*.rs). Each step maps every piece
// to its sub-pieces; as HF's PreTokenizedString::split, empty pieces are dropped after every step.
#include <memory>

#include "tokenizer/pipeline.h"
#include "tokenizer/text_pattern.h"

namespace kvbench {

using tokenizer_json::Node;
using pipeline_detail::PrependScheme;

namespace {

// GPT-2's pattern, which ByteLevel with use_regex splits by (HF compiles it with Oniguruma).
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// Rust's char::is_whitespace (Unicode White_Space).
constexpr const char* kWhiteSpace = R"(\p{White_Space})";
// Whitespace's `\w+|[^\w\s]+`, in the Rust regex crate's Unicode classes: \w is Alphabetic, marks, decimal
// digits, connector punctuation and Join_Control; \s is White_Space.
constexpr const char* kWhitespaceWords =
    R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}\p{White_Space}]+)";
// Punctuation's is_punc: ASCII punctuation (which includes symbols such as $ + < = > ^ ` | ~) or Unicode P*.
constexpr const char* kPunctuation = R"([\p{P}\x{21}-\x{2F}\x{3A}-\x{40}\x{5B}-\x{60}\x{7B}-\x{7E}])";

// HF's NormalizedString::split: the pieces `behavior` keeps of the pattern's matches (flags flipped when
// `invert`). Character-class patterns stand for HF's character predicates: one match per character.
PreTokenizer::Step splitter(std::shared_ptr<const TextPattern> pattern, SplitBehavior behavior, bool invert = false) {
  return [pattern, behavior, invert](PreToken piece, std::vector<PreToken>& out) {
    auto spans = pattern->spans(piece.text);
    if (invert)
      for (auto& span : spans) span.is_match = !span.is_match;
    for (const auto& span : apply_split_behavior(std::move(spans), behavior)) {
      if (span.end == span.start) continue;
      const std::size_t length = span.end - span.start;
      out.push_back({piece.text.substr(span.start, length), origin_within(piece.origin_bytes, span.start, length)});
    }
  };
}

std::shared_ptr<const TextPattern> compile(const Node& where, const std::string& pattern) {
  return std::make_shared<const TextPattern>(pattern, where);
}

// ByteLevel: optionally a leading space, optionally GPT-2's split, then every byte to its alphabet character.
PreTokenizer::Step byte_level(const Node& stage) {
  const bool prefix_space = stage.has("add_prefix_space") && stage.at("add_prefix_space").boolean();
  const bool use_regex = !stage.has("use_regex") || stage.at("use_regex").boolean();  // HF's default: true
  const auto gpt2_split = use_regex ? splitter(compile(stage, kGpt2Pattern), SplitBehavior::Isolated) : PreTokenizer::Step();
  return [prefix_space, gpt2_split](PreToken piece, std::vector<PreToken>& out) {
    // HF prepends nothing to an empty piece (NormalizedString::prepend needs a first character)
    if (prefix_space && !piece.text.empty() && piece.text[0] != ' ') {
      piece.text.insert(0, " ");
      if (piece.origin_bytes > 0) ++piece.origin_bytes;
    }
    const std::size_t first = out.size();
    if (gpt2_split) {
      gpt2_split(std::move(piece), out);
    } else if (!piece.text.empty()) {
      out.push_back(std::move(piece));
    }
    for (std::size_t i = first; i < out.size(); ++i) {
      std::string mapped;
      std::size_t origin = 0;
      for (std::size_t k = 0; k < out[i].text.size(); ++k) {
        mapped += byte_level_symbol(static_cast<unsigned char>(out[i].text[k]));
        if (k + 1 == out[i].origin_bytes) origin = mapped.size();
      }
      out[i] = {std::move(mapped), origin};
    }
  };
}

// Metaspace: spaces become the replacement character, which is prepended (always, or only to the piece at
// the start of the text) unless there; with `split`, each replacement character starts a new piece.
PreTokenizer::Step metaspace(const Node& stage) {
  const std::string replacement = pipeline_detail::single_character(stage.at("replacement"));
  const PrependScheme scheme = pipeline_detail::metaspace_prepend_scheme(stage);
  const bool split = !stage.has("split") || stage.at("split").boolean();
  const auto split_step =
      split ? splitter(compile(stage, TextPattern::escape(replacement)), SplitBehavior::MergedWithNext) : PreTokenizer::Step();
  return [replacement, scheme, split_step](PreToken piece, std::vector<PreToken>& out) {
    std::string replaced;  // only U+0020 becomes the replacement, not other white space
    std::size_t origin = 0;
    for (std::size_t k = 0; k < piece.text.size(); ++k) {
      if (piece.text[k] == ' ') {
        replaced += replacement;
      } else {
        replaced += piece.text[k];
      }
      if (k + 1 == piece.origin_bytes) origin = replaced.size();
    }
    piece = {std::move(replaced), origin};
    const bool prepend = scheme == PrependScheme::Always || (scheme == PrependScheme::First && piece.origin_bytes > 0);
    if (prepend && !piece.text.empty() && piece.text.compare(0, replacement.size(), replacement) != 0) {
      piece.text.insert(0, replacement);  // aligned with the piece's first character
      if (piece.origin_bytes > 0) piece.origin_bytes += replacement.size();
    }
    if (split_step) {
      split_step(std::move(piece), out);
    } else if (!piece.text.empty()) {
      out.push_back(std::move(piece));
    }
  };
}

}  // namespace

PreTokenizer::PreTokenizer(const Node& node) {
  pipeline_detail::for_each_stage(node, "pretokenizers", [this](const Node& stage) { add(stage); });
}

void PreTokenizer::add(const Node& stage) {
  const std::string type = stage.type();
  if (type == "ByteLevel") {
    steps_.push_back(byte_level(stage));
  } else if (type == "Split") {
    auto pattern = TextPattern::from_json(stage.at("pattern"));  // fields read in order: errors are predictable
    const auto behavior = split_behavior(stage.at("behavior"));
    steps_.push_back(splitter(std::move(pattern), behavior, stage.at("invert").boolean()));
  } else if (type == "Digits") {
    const bool individual = stage.at("individual_digits").boolean();
    steps_.push_back(splitter(compile(stage, R"(\p{N})"), individual ? SplitBehavior::Isolated : SplitBehavior::Contiguous));
  } else if (type == "Metaspace") {
    steps_.push_back(metaspace(stage));
  } else if (type == "Punctuation") {
    const auto behavior = stage.has("behavior") ? split_behavior(stage.at("behavior")) : SplitBehavior::Isolated;
    steps_.push_back(splitter(compile(stage, kPunctuation), behavior));
  } else if (type == "Whitespace") {
    steps_.push_back(splitter(compile(stage, kWhitespaceWords), SplitBehavior::Removed, /*invert=*/true));
  } else if (type == "WhitespaceSplit") {
    steps_.push_back(splitter(compile(stage, kWhiteSpace), SplitBehavior::Removed));
  } else {
    stage.unsupported_type();
  }
}

std::vector<std::string> PreTokenizer::split(std::string_view text, std::size_t origin_bytes) const {
  std::vector<PreToken> pieces;
  if (!text.empty()) pieces.push_back({std::string(text), origin_bytes});
  for (const auto& step : steps_) {
    std::vector<PreToken> next;
    for (auto& piece : pieces) step(std::move(piece), next);
    pieces = std::move(next);
  }
  std::vector<std::string> words;
  words.reserve(pieces.size());
  for (auto& piece : pieces) words.push_back(std::move(piece.text));
  return words;
}

}  // namespace kvbench
