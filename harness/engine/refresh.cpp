#include "engine/refresh.h"

#include <chrono>

#include "engine/budget.h"

namespace kvbench {

namespace {
// A copy on the CPU (never a view into cache storage that later steps overwrite); it also waits for the device.
at::Tensor snapshot(const at::Tensor& t, at::ScalarType dtype) { return t.to(at::kCPU, dtype, false, /*copy=*/true); }

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

RefreshRecord refresh(const Model& model, KvCache& cache, Policy& policy, const CacheBudget& budget,
                      const PhraseRules& phrase) {
  RefreshRecord record;
  record.size_before = cache.size();
  record.positions_before = snapshot(cache.all_positions(), at::kLong);
  const KeepRule rule = policy.keep_rule(budget);
  std::tie(record.candidates_begin, record.candidates_end) = candidate_range(cache.size(), budget.frozen, rule);

  auto start = std::chrono::steady_clock::now();
  const at::Tensor scores = policy.score({model, cache, budget});
  if (scores.defined()) record.scores = snapshot(scores, at::kFloat);
  record.scoring_ms = ms_since(start);

  start = std::chrono::steady_clock::now();
  const at::Tensor ranked = ranking_scores(scores, record.candidates_begin, record.candidates_end, phrase, rule.keep_lowest);
  const at::Tensor keep = select_keep(ranked, cache.size(), budget.J, budget.frozen, rule);
  if (rule.granularity == Granularity::PerKvHead)
    cache.compact_per_head(keep);
  else
    cache.compact(keep);
  policy.on_compact(keep);
  record.kept_positions = snapshot(cache.all_positions(), at::kLong);
  record.compaction_ms = ms_since(start);
  record.size_after = cache.size();
  return record;
}

}  // namespace kvbench
