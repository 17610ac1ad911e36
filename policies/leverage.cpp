// leverage (kvpress's LeverageScorePress, from Compactor, Chari & Van Durme 2025): keys that are geometric
// outliers carry information the rest cannot reconstruct. Per KV head, the approximate statistical leverage of
// each key before RoPE (sequence-centred, right-sketched by a seeded Gaussian of `sketch` columns),
// z-normalised over the layer (policies/compactor_scores.h).
// Knobs: sketch (1..4096, default 48), seed (default 0: the sketches' generator, reset for every sample).
#include <limits>

#include "policies/compactor_scores.h"

namespace kvbench {

std::unique_ptr<Policy> make_leverage_policy(const PolicyOptions& options) {
  CompactorRule rule;
  rule.name = "leverage";
  rule.summary = "per KV head: approximate leverage of the keys before RoPE through a seeded Gaussian sketch "
                 "(kvpress LeverageScorePress)";
  rule.leverage = true;
  rule.sketch = options.knobs.integer("sketch", 48, 1, 4096);
  rule.seed = static_cast<uint64_t>(options.knobs.integer("seed", 0, 0, std::numeric_limits<int64_t>::max()));
  return compactor_policy(rule);
}

}  // namespace kvbench
