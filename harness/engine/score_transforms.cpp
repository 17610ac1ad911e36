#include "engine/score_transforms.h"

#include <algorithm>
#include <vector>

#include "common/error.h"

namespace kvbench {

void validate(const PhraseRules& rules) {
  if (rules.smooth < 1 || rules.smooth % 2 == 0)
    fail("smooth (--smooth) must be an odd window W ≥ 1: a window centred on an entry has W = 2r + 1 entries "
         "(got {}; 1 = no smoothing)",
         rules.smooth);
  if (rules.keep_span < 1) fail("keep_span (--keep-span) must be ≥ 1 (got {}; 1 = no spans)", rules.keep_span);
}

namespace {
// [..., n] → [rows, n] view of a contiguous float64 CPU tensor. Accessors point into their tensor's sizes,
// so the views are named (kept alive) wherever an accessor is taken.
at::Tensor as_rows(const at::Tensor& t) { return t.view({-1, t.size(-1)}); }
}  // namespace

at::Tensor smooth_candidates(const at::Tensor& scores, int64_t begin, int64_t end, int64_t window) {
  const at::Tensor in = as_rows(scores.contiguous());
  at::Tensor out = in.clone();
  const auto from = in.accessor<double, 2>();
  auto to = out.accessor<double, 2>();
  const int64_t radius = window / 2;
  for (int64_t r = 0; r < from.size(0); ++r)
    for (int64_t i = begin; i < end; ++i) {
      const int64_t lo = std::max(begin, i - radius), hi = std::min(end - 1, i + radius);
      double sum = 0.0;  // summed in cache order: the order a recomputation would use
      for (int64_t j = lo; j <= hi; ++j) sum += from[r][j];
      to[r][i] = sum / static_cast<double>(hi - lo + 1);
    }
  return out.view(scores.sizes());
}

at::Tensor span_walk_order(const at::Tensor& scores, int64_t begin, int64_t end, int64_t span, bool keep_lowest) {
  at::Tensor out = as_rows(scores.contiguous().clone());
  // The allocator's ranking (engine/budget.cpp): a stable sort, so among equal scores the older slot leads.
  const at::Tensor ranked =
      std::get<1>(out.narrow(1, begin, end - begin).sort(/*stable=*/true, 1, /*descending=*/!keep_lowest)).contiguous();
  const auto rank = ranked.accessor<int64_t, 2>();
  auto to = out.accessor<double, 2>();
  for (int64_t r = 0; r < rank.size(0); ++r) {
    std::vector<bool> taken(end - begin, false);
    int64_t next = 0;  // how many candidates the walk has taken so far
    for (int64_t k = 0; k < rank.size(1); ++k)
      for (int64_t i = rank[r][k], j = i; j < std::min(end - begin, i + span); ++j) {
        if (taken[j]) continue;
        taken[j] = true;
        // The k-th taken gets the k-th best score: the lowest when the allocator keeps the lowest.
        to[r][begin + j] = static_cast<double>(keep_lowest ? next : -next);
        ++next;
      }
  }
  return out.view(scores.sizes());
}

at::Tensor ranking_scores(const at::Tensor& scores, int64_t begin, int64_t end, const PhraseRules& rules,
                          bool keep_lowest) {
  if (!scores.defined() || !rules.active()) return scores;
  // float32 first: the values the refresh trace records, so a kept set can be recomputed from the file.
  at::Tensor ranked = scores.to(at::kCPU, at::kFloat).to(at::kDouble);
  if (rules.smooth > 1) ranked = smooth_candidates(ranked, begin, end, rules.smooth);
  if (rules.keep_span > 1) ranked = span_walk_order(ranked, begin, end, rules.keep_span, keep_lowest);
  return ranked.to(scores.device());
}

}  // namespace kvbench
