#include "engine/budget.h"

#include <algorithm>

#include "common/error.h"

namespace kvbench {

std::pair<int64_t, int64_t> candidate_range(int64_t n, int64_t frozen, const KeepRule& rule) {
  const int64_t protected_prefix = std::min(frozen + rule.sinks, n);
  return {protected_prefix, std::max(protected_prefix, n - rule.recent)};
}

at::Tensor select_keep(const at::Tensor& scores, int64_t n, int64_t J, int64_t frozen, const KeepRule& rule) {
  const auto [F, recent_begin] = candidate_range(n, frozen, rule);
  const int64_t take = std::min(std::max<int64_t>(J - rule.sinks - rule.recent, 0), recent_begin - F);
  std::vector<int64_t> lead;
  if (scores.defined()) lead.assign(scores.sizes().begin(), scores.sizes().end() - 1);
  const auto long_opts = at::TensorOptions().dtype(at::kLong).device(scores.defined() ? scores.device() : at::kCPU);
  auto spread = [&](at::Tensor range) {  // [k] → [..., k]
    std::vector<int64_t> shape = lead;
    shape.push_back(range.size(0));
    return range.expand(shape);
  };
  std::vector<at::Tensor> parts = {spread(at::arange(0, F, long_opts))};
  if (take > 0) {
    if (!scores.defined()) fail("select_keep: policy gave no scores but {} candidates must be chosen", take);
    const at::Tensor candidates = scores.narrow(-1, F, recent_begin - F).to(at::kDouble);
    // Stable sort: among equal scores the older slot comes first, as in the reference.
    const at::Tensor order = std::get<1>(candidates.sort(/*stable=*/true, -1, /*descending=*/!rule.keep_lowest));
    parts.push_back(std::get<0>(order.narrow(-1, 0, take).sort(-1)) + F);
  }
  parts.push_back(spread(at::arange(recent_begin, n, long_opts)));
  return at::cat(parts, -1);
}

}  // namespace kvbench
