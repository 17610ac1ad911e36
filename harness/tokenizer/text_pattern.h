// Patterns that split and replace text as HF tokenizers' `Pattern` does: a PCRE2 regex (for tokenizer.json's
// {"Regex": ...}, written for Oniguruma, and {"String": ...}, a literal), the matches it finds, and the
// SplitDelimiterBehavior that turns matches into pieces.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/json_path.h"

namespace kvbench {

struct TextSpan {
  std::size_t start, end;  // bytes
  bool is_match;
};

class TextPattern {
 public:
  // `pattern` is PCRE2 syntax, compiled for UTF-8 with Unicode properties (\p{L}, \s ...); errors name `where`.
  TextPattern(const std::string& pattern, const tokenizer_json::Node& where);
  // A {"String": s} or {"Regex": r} node.
  static std::shared_ptr<const TextPattern> from_json(const tokenizer_json::Node& pattern);
  // Matches exactly `text`, literally.
  static std::string escape(std::string_view text);

  TextPattern(const TextPattern&) = delete;
  TextPattern& operator=(const TextPattern&) = delete;
  ~TextPattern();

  // The whole of `text` as consecutive spans, matches flagged. As the Rust regex crates' find_iter,
  // an empty match right where the previous match ended is skipped. `text` must be valid UTF-8.
  std::vector<TextSpan> spans(std::string_view text) const;
  // Every match replaced by `content`.
  std::string replace(std::string_view text, std::string_view content) const { return replace(text, spans(text), content); }
  // The same, with spans() of `text` computed already.
  static std::string replace(std::string_view text, const std::vector<TextSpan>& spans, std::string_view content);

 private:
  struct Code;
  std::unique_ptr<Code> code_;
};

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// The "behavior" field of a Split or Punctuation pre-tokenizer.
SplitBehavior split_behavior(const tokenizer_json::Node& behavior);

// The byte ranges the pieces of a split keep (empty ones included: the caller drops them, as HF does).
std::vector<TextSpan> apply_split_behavior(std::vector<TextSpan> spans, SplitBehavior behavior);

}  // namespace kvbench
