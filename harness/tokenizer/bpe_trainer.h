// Training a small byte-level BPE tokenizer and writing it as a tokenizer.json that Tokenizer::load
// (and HF tokenizers) read: a pre-tokenizer regex (by default GPT-2's with digits split one by one), byte-level
// alphabet, merges learned greedily by pair frequency, <s> added in front by the post-processor.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/json_file.h"

namespace kvbench {

// GPT-2's split with single digits (` ?\p{N}`), so numbers become digit sequences a small model can copy.
inline constexpr const char* kSingleDigitSplit =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct BpeTrainingOptions {
  int max_merges = 400;
  int min_pair_count = 2;  // stop when the most frequent pair occurs less often
  std::string split_pattern = kSingleDigitSplit;  // the Split pre-tokenizer's regex (PCRE2 / Oniguruma syntax)
};

struct TrainedBpe {
  json tokenizer;          // tokenizer.json
  json tokenizer_config;   // tokenizer_config.json (bos/eos names)
  std::int64_t bos_id = 0, eos_id = 1;
  std::int64_t vocab_size = 0;
};

// Deterministic: ties between equally frequent pairs go to the lexicographically smallest pair.
TrainedBpe train_byte_level_bpe(const std::vector<std::string>& corpus, const BpeTrainingOptions& options = {});

// DIR/tokenizer.json and DIR/tokenizer_config.json.
void save_tokenizer(const std::filesystem::path& dir, const TrainedBpe& bpe);

}  // namespace kvbench
