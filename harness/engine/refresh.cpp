#include "engine/refresh.h"

#include <chrono>
#include <map>

#include "common/error.h"
#include "engine/allocator.h"
#include "engine/budget.h"
#include "policies/layer_scores.h"

namespace kvbench {

namespace {
// A copy on the CPU (never a view into cache storage that later steps overwrite); it also waits for the device.
at::Tensor snapshot(const at::Tensor& t, at::ScalarType dtype) { return t.to(at::kCPU, dtype, false, /*copy=*/true); }

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

RefreshRecord record_before(const RefreshJob& job) {
  RefreshRecord record;
  record.size_before = job.cache.size();
  record.positions_before = snapshot(job.cache.all_positions(), at::kLong);
  const KeepRule rule = job.policy.keep_rule(job.budget);
  std::tie(record.candidates_begin, record.candidates_end) = candidate_range(job.cache.size(), job.budget.frozen, rule);
  return record;
}

// Every job's scores; the jobs whose policies share a spec (name and knobs) share one score_together call.
std::vector<at::Tensor> score_jobs(const Model& model, const std::vector<RefreshJob>& jobs,
                                   std::vector<RefreshRecord>& records) {
  std::map<std::string, std::vector<size_t>> by_policy;
  for (size_t i = 0; i < jobs.size(); ++i) by_policy[jobs[i].policy.spec()].push_back(i);
  std::vector<at::Tensor> scores(jobs.size());
  for (const auto& [spec, members] : by_policy) {
    std::vector<SampleScoring> samples;
    for (size_t i : members) samples.push_back({jobs[i].policy, {model, jobs[i].cache, jobs[i].budget}});
    const auto start = std::chrono::steady_clock::now();
    const std::vector<at::Tensor> together = jobs[members.front()].policy.score_together(samples);
    if (together.size() != members.size())
      fail("policy {} returned {} scores for {} samples", spec, together.size(), members.size());
    for (size_t k = 0; k < members.size(); ++k) {
      scores[members[k]] = together[k];
      if (together[k].defined()) records[members[k]].scores = snapshot(together[k], at::kFloat);
    }
    const double share = ms_since(start) / static_cast<double>(members.size());
    for (size_t i : members) records[i].scoring_ms = share;
  }
  return scores;
}

// Key rerotation (kvpress's KeyRerotationPress): each row's kept keys, rotated from their positions to their
// ranks 0, 1, …, as if the evicted tokens had never been there. A rotation by the difference, as kvpress rotates.
void rerotate_keys(const Model& model, KvCache& cache) {
  for (int64_t l = 0; l < cache.num_layers(); ++l) {
    const at::Tensor positions = cache.head_positions(l);  // [B, KV, M]
    const at::Tensor ranks = at::arange(positions.size(2), positions.options()).expand_as(positions);
    cache.set_keys(l, rope_per_head(model, cache.keys(l), ranks - positions));
  }
}

void compact(const Model& model, const RefreshJob& job, const at::Tensor& scores, RefreshRecord& record) {
  const auto start = std::chrono::steady_clock::now();
  const KeepRule rule = job.policy.keep_rule(job.budget);
  // Phrase rules meet only allocators that are not ragged (validate_allocator); inactive, they change nothing.
  const at::Tensor ranked =
      ranking_scores(scores, record.candidates_begin, record.candidates_end, job.phrase, rule.keep_lowest);
  const at::Tensor keep = find_allocator(job.budget.allocator).keep(model, ranked, job.cache, job.budget, rule);
  if (job.budget.ragged)
    job.cache.compact_ragged(keep);
  else if (rule.granularity == Granularity::PerKvHead)
    job.cache.compact_per_head(keep);
  else
    job.cache.compact(keep);
  job.policy.on_compact(keep);
  record.kept_positions = snapshot(job.cache.all_positions(), at::kLong);
  record.rerotated = rerotates(rule, job.budget);
  if (record.rerotated) rerotate_keys(model, job.cache);
  record.compaction_ms = ms_since(start);
  record.size_after = job.cache.size();
}

}  // namespace

std::vector<RefreshRecord> refresh_together(const Model& model, const std::vector<RefreshJob>& jobs) {
  std::vector<RefreshRecord> records;
  for (const RefreshJob& job : jobs) records.push_back(record_before(job));
  const std::vector<at::Tensor> scores = score_jobs(model, jobs, records);
  for (size_t i = 0; i < jobs.size(); ++i) compact(model, jobs[i], scores[i], records[i]);
  return records;
}

RefreshRecord refresh(const Model& model, KvCache& cache, Policy& policy, const CacheBudget& budget,
                      const PhraseRules& phrase) {
  return std::move(refresh_together(model, {{cache, policy, budget, phrase}}).front());
}

}  // namespace kvbench
