// The budget allocator: turns scores into the set of cache slots that survive a refresh.
#pragma once
#include <ATen/ATen.h>

#include "policies/policy.h"

namespace kvbench {

// Keep = the frozen prefix [0, F) + S sinks + the best (J − S − R) candidates + the newest R slots,
// ascending. Candidates are the slots neither frozen, sinks nor recent; "best" is the highest score,
// or the lowest with rule.keep_lowest; ties go to the older slot. `scores` is [..., n] (any leading dims: batch,
// layer, KV head) or undefined when J − R == 0. Returns int64 [..., M].
at::Tensor select_keep(const at::Tensor& scores, int64_t n, int64_t J, int64_t frozen, const KeepRule& rule);

// The candidate slots [F + S, n − R) that competed, for the refresh record.
std::pair<int64_t, int64_t> candidate_range(int64_t n, int64_t frozen, const KeepRule& rule);

}  // namespace kvbench
