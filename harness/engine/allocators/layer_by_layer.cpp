#include "engine/allocators/layer_by_layer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"

namespace kvbench {

namespace {

// Per row of a layer [B, KV, n]: the slots holding an entry, and among them the protected ones (frozen
// prefix and sinks first, the newest `recent` last, counted over held entries so padding never counts).
std::pair<at::Tensor, at::Tensor> held_and_protected(const KvCache& cache, int64_t layer, int64_t frozen,
                                                     const KeepRule& rule) {
  return {cache.head_positions(layer).ge(0), held_at_edges(cache, layer, frozen + rule.sinks, rule.recent)};
}

// Kept slots of a mask [B, KV, n]: each row's slots ascending, padded with -1 to the fullest row.
at::Tensor slots_of(const at::Tensor& keep) {
  const int64_t n = keep.size(-1);
  const at::Tensor slot = at::arange(n, keep.options().dtype(at::kLong));
  const at::Tensor kept_first = std::get<0>(at::where(keep, slot, slot + n).sort(-1));
  const at::Tensor slots = kept_first.narrow(-1, 0, keep.sum(-1).max().item<int64_t>());
  return slots.masked_fill(slots.ge(n), -1);
}

}  // namespace

at::Tensor held_at_edges(const KvCache& cache, int64_t layer, int64_t first, int64_t last) {
  const at::Tensor held = cache.head_positions(layer).ge(0);
  const at::Tensor index = held.cumsum(-1) - 1;  // each slot's index among the row's entries
  const at::Tensor count = held.sum(-1, /*keepdim=*/true);
  return held.logical_and(index.lt(first).logical_or(index.ge(count - last)));
}

at::Tensor keep_layer_by_layer(const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                               const KeepRule& rule, const std::string& allocator, const ChooseCandidates& choose) {
  const int64_t L = cache.num_layers();
  if (scores.defined() && scores.dim() != 4 && scores.dim() != 2)
    fail("allocator {}: the policy gave no scores per entry", allocator);
  // Token-level scores (of a token-level cache, before its first ragged compaction) are every layer's and head's.
  const at::Tensor per_head = !scores.defined() || scores.dim() == 4
                                  ? scores
                                  : scores.view({scores.size(0), 1, 1, scores.size(1)})
                                        .expand({scores.size(0), L, cache.keys(0).size(1), scores.size(1)});
  std::vector<at::Tensor> layers;
  for (int64_t l = 0; l < L; ++l) {
    const auto [held, protect] = held_and_protected(cache, l, budget.frozen, rule);
    const at::Tensor layer_scores =
        per_head.defined() ? per_head.select(1, l).narrow(-1, 0, held.size(-1)).to(held.device()) : at::Tensor();
    const at::Tensor candidates = held.logical_and(protect.logical_not());
    layers.push_back(slots_of(protect.logical_or(choose(layer_scores, candidates, l))));
  }
  int64_t widest = 0;
  for (const at::Tensor& slots : layers) widest = std::max(widest, slots.size(-1));
  for (at::Tensor& slots : layers) slots = at::constant_pad_nd(slots, {0, widest - slots.size(-1)}, -1);
  return at::stack(layers, 1);
}

at::Tensor keep_by_layer_budgets(const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                                 const KeepRule& rule, const std::string& allocator, const std::vector<int64_t>& budgets) {
  return keep_layer_by_layer(scores, cache, budget, rule, allocator,
                             [&](const at::Tensor& layer_scores, const at::Tensor& candidates, int64_t layer) {
                               const int64_t per_head = std::max<int64_t>(budgets[layer] - rule.sinks - rule.recent, 0);
                               return best_candidates(layer_scores, candidates, per_head, rule.keep_lowest);
                             });
}

namespace {
// Each entry's rank among its row's [..., n]: candidates by score (best first, ties to the earlier slot), then every
// non-candidate. Two stable sorts make that order, by score, then by candidacy.
at::Tensor candidate_ranks(const at::Tensor& scores, const at::Tensor& candidates, bool keep_lowest) {
  const at::Tensor by_score = std::get<1>(scores.to(at::kDouble).sort(/*stable=*/true, -1, /*descending=*/!keep_lowest));
  const at::Tensor candidate_first = candidates.gather(-1, by_score).to(at::kInt);
  const at::Tensor order = by_score.gather(-1, std::get<1>(candidate_first.sort(/*stable=*/true, -1, /*descending=*/true)));
  at::Tensor rank = at::empty_like(order);
  rank.scatter_(-1, order, at::arange(order.size(-1), order.options()).expand_as(order).contiguous());
  return rank;
}
}  // namespace

at::Tensor best_candidates(const at::Tensor& scores, const at::Tensor& candidates, int64_t take, bool keep_lowest) {
  return candidates.logical_and(candidate_ranks(scores, candidates, keep_lowest).lt(take));
}

at::Tensor best_candidates(const at::Tensor& scores, const at::Tensor& candidates, const at::Tensor& take,
                           bool keep_lowest) {
  return candidates.logical_and(candidate_ranks(scores, candidates, keep_lowest).lt(take));
}

std::vector<int64_t> whole_budgets(const std::vector<double>& exact, int64_t total) {
  const int64_t n = static_cast<int64_t>(exact.size());
  std::vector<int64_t> budgets(n);
  std::vector<double> fraction(n);
  for (int64_t i = 0; i < n; ++i) {
    budgets[i] = static_cast<int64_t>(std::floor(exact[i]));
    fraction[i] = exact[i] - static_cast<double>(budgets[i]);
  }
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return fraction[a] > fraction[b]; });
  const int64_t missing = total - std::accumulate(budgets.begin(), budgets.end(), int64_t{0});
  for (int64_t i = 0; i < missing; ++i) ++budgets[order[i % n]];
  return budgets;
}

}  // namespace kvbench
