// tokenizer.json's "added_tokens": strings matched in the text before the model sees it, as HF's
// AddedVocabulary does (leftmost-longest; lstrip/rstrip swallow neighbouring whitespace; tokens
// with normalized=true are matched in normalized text, in their normalized form).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/json_path.h"
#include "tokenizer/pipeline.h"

namespace kvbench {

struct AddedToken {
  std::int64_t id;
  std::string content;
  bool special, lstrip, rstrip, normalized;
};

// A piece of text: either an added token's id or text still to tokenize.
struct Segment {
  std::string_view text;
  std::optional<std::int64_t> added_id;
};

class AddedTokens {
 public:
  AddedTokens(const tokenizer_json::Node& list, const Normalizer& normalizer);

  std::vector<Segment> split_raw(std::string_view text) const { return raw_.split(text); }
  std::vector<Segment> split_normalized(std::string_view text) const { return normalized_.split(text); }
  const AddedToken* find(std::int64_t id) const;
  std::optional<std::int64_t> find(const std::string& content) const;
  std::int64_t max_id() const;

 private:
  class Matcher {
   public:
    void add(std::string pattern, const AddedToken& token);
    std::vector<Segment> split(std::string_view text) const;

   private:
    struct Pattern {
      std::string text;
      const AddedToken* token;
    };
    // Patterns by first byte, longest first, so the first hit at a position is the longest.
    std::vector<Pattern> by_first_byte_[256];
  };

  std::vector<AddedToken> tokens_;
  std::unordered_map<std::int64_t, std::size_t> index_by_id_;
  Matcher raw_, normalized_;
};

}  // namespace kvbench
