// What the ragged allocators share: each layer of a ragged cache chooses its own keep set, every
// (layer, KV head) row keeping its protected entries (engine/allocator.h) and the candidates a rule of the
// allocator's picks; and the rounding of exact per-layer shares to whole budgets.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <vector>

#include "policies/policy.h"

namespace kvbench {

// The candidates layer `layer` keeps, as a mask [B, KV, n], from its scores and candidate mask [B, KV, n].
using ChooseCandidates =
    std::function<at::Tensor(const at::Tensor& scores, const at::Tensor& candidates, int64_t layer)>;

// The keep set [B, L, KV, M] of a ragged refresh from scores [B, L, KV, ≥ N] over `cache` (padding slots
// ignored), or [B, N] token-level scores of a token-level cache (shared by every layer and head), or none (an
// allocator that chooses by position: `choose` then gets an undefined tensor).
at::Tensor keep_layer_by_layer(const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                               const KeepRule& rule, const std::string& allocator, const ChooseCandidates& choose);

// keep_layer_by_layer with a budget per layer (in J's units, sinks and recent included): each head of layer
// l keeps its own best (budgets[l] − sinks − recent) candidates.
at::Tensor keep_by_layer_budgets(const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                                 const KeepRule& rule, const std::string& allocator, const std::vector<int64_t>& budgets);

// The `take` best candidates of each row of scores [..., n] as a mask (best first by rule.keep_lowest,
// ties to the earlier slot, as select_keep).
at::Tensor best_candidates(const at::Tensor& scores, const at::Tensor& candidates, int64_t take, bool keep_lowest);
// The same with a take of each row's own: `take` [..., 1].
at::Tensor best_candidates(const at::Tensor& scores, const at::Tensor& candidates, const at::Tensor& take,
                           bool keep_lowest);

// [B, KV, n] of layer `layer`: the slots holding one of their row's `first` oldest or `last` newest entries (counted
// over the entries the row holds, so padding never counts).
at::Tensor held_at_edges(const KvCache& cache, int64_t layer, int64_t first, int64_t last);

// Exact shares rounded to whole budgets summing to `total` (the shares' sum): each rounded down, then the
// missing units one each to the largest fractional parts (ties: the lower index).
std::vector<int64_t> whole_budgets(const std::vector<double>& exact, int64_t total);

}  // namespace kvbench
