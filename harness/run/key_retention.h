// How much of a prompt's key passages (Task::key_texts, e.g. rare-fact's fact sentences) the cache
// held when generation began: the direct measure of whether a policy keeps a rare fact, apart from
// whether the model then uses it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/generate.h"
#include "tokenizer/tokenizer.h"

namespace kvbench {

// Prompt positions of the tokens overlapping any of `keys`, each found in the decoded prompt; empty
// when a key is not there.
std::vector<int64_t> key_positions(const std::vector<int64_t>& prompt, const Tokenizer& tokenizer,
                                   const std::vector<std::string>& keys);

// Fraction of `keys` (positions) in the cache that produced rollout `rollout`'s first token: kept by
// the last prefill refresh, or fed after it (per-KV-head policies: the mean over layers and heads).
// NaN without keys; 1 when the prefill evicted nothing.
double key_retention(const GenerationResult& result, int64_t rollout, const std::vector<int64_t>& keys);

}  // namespace kvbench
