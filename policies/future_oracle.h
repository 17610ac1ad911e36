// future-oracle: the headroom any KVpop scorer is measured against. Per KV head it keeps the sinks,
// the protected window and the top-k entries by their *true* future attention mass
// (train/kvpop_targets.h), known only after the fact: before generating, the policy runs the full cache
// on the same prompt (rollout 0's greedy or sampled continuation is the future) and measures it, with the
// protected window w = the budget's recent window. Entries the full run never saw (a continuation that
// went further) count as +∞ (they are recent).
#pragma once
#include "engine/generate.h"  // up: the oracle first generates the same prompt with a full cache
#include "train/kvpop_targets.h"  // up: it keeps by KVpop's training target, the future attention mass

namespace kvbench {

// The policy over precomputed targets [L, KV, S] (original positions 0..S−1); it does not look ahead.
std::unique_ptr<Policy> future_oracle_policy(at::Tensor targets);

// The look-ahead's settings: the generation's own (same sampling, length, stop ids and rollouts, so rollout
// 0 continues the prompt as the full cache would), never refreshed, and without what only records the run
// and cannot change its tokens: --shadow full would decode a second full-cache twin of a full-cache run.
GenerationSettings look_ahead_settings(const GenerationSettings& settings);

// Targets [L, KV, S] of the sequence `ids` from one causal pass (no S×S matrix).
at::Tensor future_oracle_targets(const Model& model, const std::vector<int64_t>& ids, const FutureMassSpec& spec);

}  // namespace kvbench
