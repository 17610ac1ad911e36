// non-causal-attention (kvpress's NonCausalAttnPress, from Compactor, Chari & Van Durme 2025): how much the
// sequence's own queries attend to an entry when attention within a tile of `chunk` entries runs both ways. Per
// KV head: the attention each entry receives from its tile's queries, times ‖v‖, smoothed over 3 neighbours,
// z-normalised over the layer (policies/compactor_scores.h). Keeps every fed token's queries for this.
// Knobs: chunk (1..65536, default 256).
#include "policies/compactor_scores.h"

namespace kvbench {

std::unique_ptr<Policy> make_non_causal_attention_policy(const PolicyOptions& options) {
  CompactorRule rule;
  rule.name = "non-causal-attention";
  rule.summary = "per KV head: attention received from the queries of its `chunk`-entry tile, both ways, times ‖v‖ "
                 "(kvpress NonCausalAttnPress)";
  rule.attention = true;
  rule.chunk = options.knobs.integer("chunk", 256, 1, 65536);
  return compactor_policy(rule);
}

}  // namespace kvbench
