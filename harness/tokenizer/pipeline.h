// The stages tokenizer.json declares around its model: normalizer, pre_tokenizer, post_processor
// and decoder. Each is built from its JSON node (null = identity) and rejects types it does not know.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/json_path.h"

namespace kvbench {

class Normalizer {
 public:
  explicit Normalizer(const tokenizer_json::Node& node);
  std::string apply(std::string_view text) const;

 private:
  struct Step {
    enum class Kind { Nfc, Prepend, Replace } kind;
    std::string text, replacement;  // Prepend: text; Replace: text -> replacement
  };
  void add(const tokenizer_json::Node& node);
  std::vector<Step> steps_;
};

class SplitRegex;

// The byte-level alphabet (GPT-2's bytes_to_unicode): the UTF-8 text of the character standing for `byte`.
const std::string& byte_level_symbol(unsigned char byte);

class PreTokenizer {
 public:
  explicit PreTokenizer(const tokenizer_json::Node& node);
  // Splits normalized text into words, already mapped to the model's alphabet.
  std::vector<std::string> split(std::string_view text) const;

 private:
  struct Step {
    enum class Kind { SplitIsolated, ByteLevel } kind;
    std::shared_ptr<const SplitRegex> regex;
  };
  void add(const tokenizer_json::Node& node);
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
  struct Step {
    enum class Kind { ByteLevel, Replace, ByteFallback, Fuse, Strip } kind;
    std::string text, replacement;  // Replace: text -> replacement; Strip: the character
    std::int64_t start = 0, stop = 0;
  };
  void add(const tokenizer_json::Node& node);
  std::vector<Step> steps_;
  bool has_decoder_ = false;
};

}  // namespace kvbench
