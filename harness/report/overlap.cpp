#include "report/overlap.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "common/error.h"
#include "common/stats.h"

namespace kvbench {

namespace {

// Jaccard index of two kept sets of original positions (both empty: identical, 1).
double jaccard(std::vector<int64_t> a, std::vector<int64_t> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<int64_t> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
  const size_t united = a.size() + b.size() - common.size();
  return united == 0 ? 1.0 : static_cast<double>(common.size()) / static_cast<double>(united);
}

// Kept positions of one (layer, KV head) of a trace; a token-level trace has the same set for every head.
std::vector<int64_t> kept_of_head(const RefreshTrace& t, int64_t head) {
  const int64_t heads = t.layers * t.kv_heads;
  if (heads == 1) return t.kept_positions;
  const auto per_head = static_cast<int64_t>(t.kept_positions.size()) / heads;
  const auto begin = t.kept_positions.begin() + head * per_head;
  return {begin, begin + per_head};
}

double trace_jaccard(const RefreshTrace& a, const RefreshTrace& b) {
  const int64_t heads = std::max(a.layers * a.kv_heads, b.layers * b.kv_heads);
  if (a.layers * a.kv_heads != 1 && b.layers * b.kv_heads != 1 && a.layers * a.kv_heads != heads)
    fail("kept sets per head of different shapes ({}×{} and {}×{}): not the same model", a.layers, a.kv_heads,
         b.layers, b.kv_heads);
  double sum = 0.0;
  for (int64_t head = 0; head < heads; ++head) sum += jaccard(kept_of_head(a, head), kept_of_head(b, head));
  return sum / static_cast<double>(heads);
}

struct MatchedRefresh {
  std::string sample;
  int64_t rollout = 0, index = 0;
  const RefreshTrace *a = nullptr, *b = nullptr;
  double jaccard = 0.0;
};

struct PairOverlap {
  const JobResults *a = nullptr, *b = nullptr;
  std::vector<MatchedRefresh> matched;
  int64_t unmatched = 0;
};

using RowKey = std::pair<std::string, int64_t>;  // sample id, rollout

// Each row's refreshes in the order they happened.
std::map<RowKey, std::vector<const RefreshTrace*>> refreshes_by_row(const JobResults& job) {
  std::map<RowKey, std::vector<const RefreshTrace*>> out;
  const auto& rows = job.results.rows;
  for (const auto& trace : job.results.refreshes) {
    if (trace.row < 0 || trace.row >= static_cast<int64_t>(rows.size()))
      fail("{}: a refresh names row {} of {}", job.file.string(), trace.row, rows.size());
    out[{rows[trace.row].sample_id, rows[trace.row].rollout}].push_back(&trace);
  }
  return out;
}

PairOverlap compare(const JobResults& a, const JobResults& b) {
  PairOverlap pair{&a, &b, {}, 0};
  const auto of_a = refreshes_by_row(a), of_b = refreshes_by_row(b);
  for (const auto& [key, traces_a] : of_a) {
    const auto found = of_b.find(key);
    const size_t in_b = found == of_b.end() ? 0 : found->second.size();
    for (size_t k = 0; k < std::max(traces_a.size(), in_b); ++k) {
      const RefreshTrace* ta = k < traces_a.size() ? traces_a[k] : nullptr;
      const RefreshTrace* tb = k < in_b ? found->second[k] : nullptr;
      if (!ta || !tb || ta->processed != tb->processed) {
        pair.unmatched += (ta != nullptr) + (tb != nullptr);
        continue;
      }
      pair.matched.push_back({key.first, key.second, static_cast<int64_t>(k), ta, tb, trace_jaccard(*ta, *tb)});
    }
  }
  for (const auto& [key, traces_b] : of_b)
    if (!of_a.count(key)) pair.unmatched += static_cast<int64_t>(traces_b.size());
  return pair;
}

// Every pair of files with the same model, task, J, h and seed and different policies, in file order.
std::vector<PairOverlap> overlapping_pairs(const std::vector<JobResults>& jobs) {
  std::vector<PairOverlap> pairs;
  for (size_t i = 0; i < jobs.size(); ++i)
    for (size_t j = i + 1; j < jobs.size(); ++j) {
      const JobResults &a = jobs[i], &b = jobs[j];
      if (std::tie(a.model, a.task, a.J, a.h, a.seed) == std::tie(b.model, b.task, b.J, b.h, b.seed) &&
          a.policy != b.policy)
        pairs.push_back(compare(a, b));
    }
  if (pairs.empty())
    fail("no two files share model, task, J, h and seed under different policies: the overlap table compares "
         "the kept sets of two policies on the same samples (pass the files of both, e.g. --policy A --policy B)");
  return pairs;
}

std::string mean_cell(const std::vector<MatchedRefresh>& matched, const char* phase) {
  std::vector<double> values;
  for (const auto& m : matched)
    if (!phase || m.a->phase == phase) values.push_back(m.jaccard);
  return values.empty() ? "–" : fmt::format("{:.3f}", mean(values));
}

std::string min_cell(const std::vector<MatchedRefresh>& matched) {
  if (matched.empty()) return "–";
  return fmt::format("{:.3f}", std::min_element(matched.begin(), matched.end(), [](const auto& x, const auto& y) {
                                 return x.jaccard < y.jaccard;
                               })->jaccard);
}

}  // namespace

std::vector<Table> overlap_tables(const std::vector<JobResults>& jobs) {
  Table table{"Kept-set overlap (Jaccard |A∩B|/|A∪B| of kept positions), per refresh matched by sample, rollout "
              "and refresh index; means over matched refreshes",
              {"model", "task", "J", "h", "seed", "policy A", "policy B", "refreshes", "mean", "prefill", "decode",
               "min", "unmatched"},
              {}};
  for (const PairOverlap& pair : overlapping_pairs(jobs)) {
    const JobResults& a = *pair.a;
    table.rows.push_back({a.model, a.task, a.J.text(), std::to_string(a.h), std::to_string(a.seed), a.policy,
                          pair.b->policy, std::to_string(pair.matched.size()), mean_cell(pair.matched, nullptr),
                          mean_cell(pair.matched, "prefill"), mean_cell(pair.matched, "decode"),
                          min_cell(pair.matched), std::to_string(pair.unmatched)});
  }
  return {table};
}

std::vector<Table> overlap_refresh_tables(const std::vector<JobResults>& jobs) {
  Table table{"Kept-set overlap per matched refresh (Jaccard of kept positions)",
              {"J", "policy A", "policy B", "sample", "rollout", "refresh", "phase", "step", "n", "kept A", "kept B",
               "jaccard"},
              {}};
  for (const PairOverlap& pair : overlapping_pairs(jobs))
    for (const MatchedRefresh& m : pair.matched)
      table.rows.push_back({pair.a->J.text(), pair.a->policy, pair.b->policy, m.sample,
                            std::to_string(m.rollout), std::to_string(m.index), m.a->phase, std::to_string(m.a->step),
                            std::to_string(m.a->size_before), std::to_string(m.a->size_after),
                            std::to_string(m.b->size_after), fmt::format("{:.4f}", m.jaccard)});
  return {table};
}

}  // namespace kvbench
