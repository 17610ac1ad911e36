// future-oracle: the headroom any KVpop scorer is measured against. Per KV head it keeps the sinks,
// the protected window and the top-k entries by their *true* future attention mass
// (policies/kvpop_targets.h), known only after the fact: before generating, the policy asks for the full cache's
// continuation of the same prompt (rollout 0's greedy or sampled one is the future) and measures it, with the
// protected window w = the budget's recent window. Entries the full run never saw (a continuation that
// went further) count as +∞ (they are recent).
#pragma once
#include "policies/kvpop_targets.h"
#include "policies/policy.h"

namespace kvbench {

// The policy over precomputed targets [L, KV, S] (original positions 0..S−1); it does not look ahead.
std::unique_ptr<Policy> future_oracle_policy(at::Tensor targets);

// Targets [L, KV, S] of the sequence `ids` from one causal pass (no S×S matrix).
at::Tensor future_oracle_targets(const Model& model, const std::vector<int64_t>& ids, const FutureMassSpec& spec);

}  // namespace kvbench
