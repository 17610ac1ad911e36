// A policy that is its rule alone, as a kvpress press is its score function: everything else a Policy
// declares keeps its default; `summary` says what it keeps. Two shapes:
//   per_head_rule  scores each layer and KV head on its own: rule(context, layer, positions) → [B, KV, N_l]
//                  (positions: the layer's original positions [B, KV, N_l], -1 = a ragged cache's padding);
//                  the slots are stacked to [B, L, KV, N] (layer_scores.h), so every allocator serves it
//   position_rule  no scores: the frozen prefix, `sinks(budget)` entries after it and the newest
//                  `recent(budget)` entries stay
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "policies/policy.h"

namespace kvbench {

using LayerRule = std::function<at::Tensor(const ScoringContext& context, int64_t layer, const at::Tensor& positions)>;
std::unique_ptr<Policy> per_head_rule(std::string name, std::string summary, LayerRule rule);

using BudgetShare = std::function<int64_t(const CacheBudget& budget)>;
std::unique_ptr<Policy> position_rule(std::string name, std::string summary, BudgetShare recent,
                                      BudgetShare sinks = {});

}  // namespace kvbench
