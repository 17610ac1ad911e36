// Phrase-level keep rules, between scoring and budgeting: the counter-causal paper's suggested next step
// against evicting single predictable tokens inside a phrase the model still needs. They change only the
// scores the allocator ranks (engine/budget.h), never the scores a policy reports, so any scorer combines
// with them and the refresh trace keeps the raw scores.
//
// Both act on the candidate slots [begin, end) alone (see candidate_range): the frozen prefix, sinks and
// the recent window are kept regardless, and their scores (for counter-causal the newest entries have no
// future) must not leak into the candidates' ranking.
//   smooth W     each candidate's score becomes the mean of the candidates in the centred window of W
//                slots around it, in cache order (W odd; at the ends of the candidate range the window is
//                truncated to the candidates that exist, and the mean is over those).
//   keep-span S  walking the candidates from best to worst (ties: older first), each brings its S − 1
//                followers (the next candidate slots in cache order) with it; slots already taken are not
//                taken twice, and the walk stops when the budget is full, so the last span may be cut short
//                and exactly as many entries are kept as without the rule.
// Both rank the scores as the refresh trace records them (float32), so the kept sets can be recomputed
// from a results file; with W = S = 1 the scores pass through untouched (bit-for-bit the old behaviour).
#pragma once
#include <ATen/ATen.h>

#include <cstdint>

namespace kvbench {

struct PhraseRules {
  int64_t smooth = 1;     // W, the centred window (odd)
  int64_t keep_span = 1;  // S, entries kept together from a ranked entry onwards
  bool active() const { return smooth > 1 || keep_span > 1; }
};

// Throws kvbench::Error naming the field: smooth must be odd and ≥ 1, keep_span ≥ 1.
void validate(const PhraseRules& rules);

// The scores [..., n] the allocator ranks: candidates [begin, end) smoothed (W > 1), then replaced by
// their place in the span walk (S > 1), oriented so that select_keep's top-k by `keep_lowest` takes the
// walk's first k. Unchanged (the same tensor) when no rule is active or `scores` is undefined.
at::Tensor ranking_scores(const at::Tensor& scores, int64_t begin, int64_t end, const PhraseRules& rules,
                          bool keep_lowest);

// The two steps, for tests: float64 CPU scores [..., n] in, the same shape out (slots outside the
// candidates copied).
at::Tensor smooth_candidates(const at::Tensor& scores, int64_t begin, int64_t end, int64_t window);
at::Tensor span_walk_order(const at::Tensor& scores, int64_t begin, int64_t end, int64_t span, bool keep_lowest);

}  // namespace kvbench
