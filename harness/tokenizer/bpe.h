// The BPE model of tokenizer.json: vocabulary, merges by rank, optional byte fallback and unknown token.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/json_path.h"

namespace kvbench {

class BpeModel {
 public:
  explicit BpeModel(const tokenizer_json::Node& model);
  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  // Appends the ids of one pre-tokenized word, given in the model's alphabet.
  void encode_word(std::string_view word, std::vector<std::int64_t>& ids) const;

  std::optional<std::int64_t> token_to_id(const std::string& token) const;
  const std::string* id_to_token(std::int64_t id) const;
  std::int64_t max_id() const { return static_cast<std::int64_t>(id_to_token_.size()) - 1; }

 private:
  struct Merge {
    std::int32_t rank;
    std::int64_t merged_id;
  };
  struct Symbol {
    std::int64_t id;
    std::size_t byte_length;
  };

  void load_vocab(const tokenizer_json::Node& vocab);
  void load_merges(const tokenizer_json::Node& merges);
  std::vector<Symbol> initial_symbols(std::string_view word) const;
  std::vector<std::int64_t> merge(std::vector<Symbol> symbols) const;
  const Merge* find_merge(std::int64_t left, std::int64_t right) const;

  std::unordered_map<std::string, std::int64_t> vocab_;
  std::vector<std::string> id_to_token_;
  std::unordered_map<std::uint64_t, Merge> merges_;
  std::optional<std::int64_t> unk_id_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::optional<std::int64_t> byte_ids_[256];  // <0xNN> tokens, for byte fallback

  // Words repeat a lot in real text; remembering their ids keeps long documents cheap.
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<std::int64_t>> cache_;
};

}  // namespace kvbench
