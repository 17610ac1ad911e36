#include "engine/allocator.h"

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
  const at::Tensor held = cache.head_positions(layer).ge(0);
  const at::Tensor index = held.cumsum(-1) - 1;  // each slot's index among the row's entries
  const at::Tensor count = held.sum(-1, /*keepdim=*/true);
  const at::Tensor edge = index.lt(frozen + rule.sinks).logical_or(index.ge(count - rule.recent));
  return {held, held.logical_and(edge)};
}

// The `take` best candidates of each row of scores [..., n] as a mask: candidates ranked by score (best
// first, ties to the earlier slot, as select_keep), then every non-candidate. Two stable sorts make
// that order: by score, then by candidacy.
at::Tensor best_candidates(const at::Tensor& scores, const at::Tensor& candidates, int64_t take, bool keep_lowest) {
  const at::Tensor by_score = std::get<1>(scores.to(at::kDouble).sort(/*stable=*/true, -1, /*descending=*/!keep_lowest));
  const at::Tensor candidate_first = candidates.gather(-1, by_score).to(at::kInt);
  const at::Tensor order = by_score.gather(-1, std::get<1>(candidate_first.sort(/*stable=*/true, -1, /*descending=*/true)));
  at::Tensor rank = at::empty_like(order);
  rank.scatter_(-1, order, at::arange(order.size(-1), order.options()).expand_as(order).contiguous());
  return candidates.logical_and(rank.lt(take));
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

CacheBudget::Allocator parse_allocator(const std::string& name) {
  if (name == "uniform") return CacheBudget::Allocator::Uniform;
  if (name == "pyramid") return CacheBudget::Allocator::Pyramid;
  if (name == "ada") return CacheBudget::Allocator::Ada;
  fail("allocator must be uniform, pyramid or ada (got \"{}\")", name);
}

std::string allocator_name(CacheBudget::Allocator allocator) {
  switch (allocator) {
    case CacheBudget::Allocator::Pyramid: return "pyramid";
    case CacheBudget::Allocator::Ada: return "ada";
    default: return "uniform";
  }
}

std::vector<int64_t> pyramid_budgets(int64_t J, int64_t layers, double ratio, int64_t minimum) {
  if (!std::isfinite(ratio) || ratio < 1.0) fail("pyramid_ratio must be a finite number ≥ 1 (got {})", ratio);
  std::vector<int64_t> budgets(layers);
  std::vector<double> fraction(layers);
  for (int64_t l = 0; l < layers; ++l) {
    const double exact = layers == 1 ? static_cast<double>(J)
                                     : 2.0 * J / (1.0 + ratio) * (ratio - (ratio - 1.0) * l / static_cast<double>(layers - 1));
    budgets[l] = static_cast<int64_t>(std::floor(exact));
    fraction[l] = exact - static_cast<double>(budgets[l]);
  }
  // The units rounding dropped go to the largest fractional parts (ties: the lower layer).
  std::vector<int64_t> order(layers);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return fraction[a] > fraction[b]; });
  const int64_t missing = layers * J - std::accumulate(budgets.begin(), budgets.end(), int64_t{0});
  for (int64_t i = 0; i < missing; ++i) ++budgets[order[i % layers]];
  for (int64_t l = 0; l < layers; ++l)
    if (budgets[l] < minimum)
      fail("pyramid_ratio {} gives layer {} a budget of {}, below the {} entries every head must keep (sinks + recent); "
           "lower the ratio or raise J",
           ratio, l, budgets[l], minimum);
  return budgets;
}

at::Tensor allocate_ragged(const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                           const KeepRule& rule) {
  const std::string name = allocator_name(budget.allocator);
  const int64_t L = cache.num_layers();
  if (!scores.defined() || (scores.dim() != 4 && scores.dim() != 2))
    fail("allocator {}: the policy gave no scores per entry", name);
  // Token-level scores (of a token-level cache, before its first ragged compaction) are every layer's and head's.
  const at::Tensor per_head = scores.dim() == 2 ? scores.view({scores.size(0), 1, 1, scores.size(1)})
                                                      .expand({scores.size(0), L, cache.keys(0).size(1), scores.size(1)})
                                                : scores;
  const bool pyramid = budget.allocator == CacheBudget::Allocator::Pyramid;
  const std::vector<int64_t> budgets = pyramid ? pyramid_budgets(budget.J, L, budget.pyramid_ratio, rule.sinks + rule.recent)
                                               : std::vector<int64_t>(L, budget.J);
  std::vector<at::Tensor> layers;
  for (int64_t l = 0; l < L; ++l) {
    const auto [held, protect] = held_and_protected(cache, l, budget.frozen, rule);
    const at::Tensor layer_scores = per_head.select(1, l).narrow(-1, 0, held.size(-1)).to(held.device());
    const at::Tensor candidates = held.logical_and(protect.logical_not());
    const int64_t per_head = std::max<int64_t>(budgets[l] - rule.sinks - rule.recent, 0);
    // ada: the layer's heads compete in one pool of KV · per_head candidate slots.
    const at::Tensor chosen =
        pyramid ? best_candidates(layer_scores, candidates, per_head, rule.keep_lowest)
                : best_candidates(layer_scores.flatten(1), candidates.flatten(1), held.size(1) * per_head, rule.keep_lowest)
                      .view_as(candidates);
    layers.push_back(slots_of(protect.logical_or(chosen)));
  }
  int64_t widest = 0;
  for (const at::Tensor& slots : layers) widest = std::max(widest, slots.size(-1));
  for (at::Tensor& slots : layers) slots = at::constant_pad_nd(slots, {0, widest - slots.size(-1)}, -1);
  return at::stack(layers, 1);
}

void validate_allocator(const CacheBudget& budget, const PhraseRules& phrase, const Policy& policy,
                        const ModelConfig& config) {
  if (phrase.active() && budget.allocator != CacheBudget::Allocator::Uniform)
    fail("--smooth and --keep-span rank one token-level list of candidates: they need --allocator uniform");
  if (budget.allocator == CacheBudget::Allocator::Uniform || !policy.evicts()) return;
  if (!policy.scores_ragged_caches()) {
    std::string able;
    for (const std::string& name : policy_names())
      if (make_policy(name)->scores_ragged_caches()) able += (able.empty() ? "" : ", ") + name;
    fail("allocator {} needs a policy that scores every layer and KV head of a ragged cache ({}); {} does not "
         "(use allocator uniform)",
         allocator_name(budget.allocator), able, policy.name());
  }
  const KeepRule rule = policy.keep_rule(budget);
  if (budget.allocator == CacheBudget::Allocator::Ada && rule.granularity != Granularity::PerKvHead)
    fail("allocator ada shares each layer's budget among its KV heads by their own scores; {} scores tokens "
         "(use allocator pyramid or uniform)",
         policy.name());
  if (budget.allocator == CacheBudget::Allocator::Pyramid)
    pyramid_budgets(budget.J, config.num_layers, budget.pyramid_ratio, rule.sinks + rule.recent);
}

}  // namespace kvbench
