// DuoAttention's head patterns estimated from a model and a few texts, as kvpress's duo_attention_on_the_fly
// computes them (its DuoAttentionPress(on_the_fly_scoring=True)): instead of DuoAttention's optimised gates, for
// each text, layer and query head the mean query and mean key over the text's tokens (before RoPE, after Qwen3's
// q/k norms) are repeated over `length` positions and rotated; the last position's query attends to those keys,
// and the head scores the mean of the attention's running sum (the area under its cumulated curve: near 1 for a
// head that looks back far, near 0 for one that looks at the newest entries). A KV head scores its query group's
// mean, averaged over the texts. Written as DuoAttention's attn_patterns (engine/allocators/duo.cpp reads them),
// with kvpress's sink 128 and recent 256 for streaming heads.
#pragma once
#include <filesystem>
#include <vector>

#include "model/model.h"

namespace kvbench {

constexpr int64_t kDuoOnTheFlySink = 128, kDuoOnTheFlyRecent = 256;

// Scores [layer][KV head] from the token sequences `texts`.
std::vector<std::vector<double>> duo_head_scores(const Model& model, const std::vector<std::vector<int64_t>>& texts,
                                                 int64_t length = 500);

// `directory`/config.json ({"sink_size", "recent_size"}) and full_attention_heads.tsv (a row per layer), each
// written whole or not at all.
void write_duo_patterns(const std::filesystem::path& directory, const std::vector<std::vector<double>>& scores,
                        int64_t sink = kDuoOnTheFlySink, int64_t recent = kDuoOnTheFlyRecent);

}  // namespace kvbench
