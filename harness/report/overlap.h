// Kept-set overlap between policies, from results files only: why do two policies (say counter-causal and
// its fast variant) score differently — do they even keep different entries?
//
// Files are paired when they ran the same model, task, J, h and seed under different policies (a policy
// with phrase rules counts as its own). Refreshes are matched by sample, rollout and refresh index (the
// k-th refresh of that row in both files; the schedule depends only on tokens processed, so matched
// refreshes also agree on `processed` — those that do not, and refreshes one file has and the other lacks,
// e.g. after one rollout stopped earlier, are counted as unmatched). Each matched pair contributes the
// Jaccard index |A ∩ B| / |A ∪ B| of the kept original positions; per-KV-head policies contribute the mean
// over layers × KV heads, a token-level kept set standing for every head.
#pragma once
#include <vector>

#include "report/tables.h"

namespace kvbench {

// One row per pair of policies: matched refreshes, mean Jaccard (all, prefill, decode), min, unmatched.
std::vector<Table> overlap_tables(const std::vector<JobResults>& jobs);
// One row per matched refresh: sample, rollout, refresh index, phase, step, n, kept sizes, Jaccard.
std::vector<Table> overlap_refresh_tables(const std::vector<JobResults>& jobs);

}  // namespace kvbench
