// sliding: the frozen prefix + the newest J entries. No scores: the whole budget is the recent window.
#include "policies/policy.h"

namespace kvbench {

namespace {
class SlidingPolicy final : public Policy {
 public:
  std::string name() const override { return "sliding"; }
  KeepRule keep_rule(const CacheBudget& budget) const override { return {false, budget.J, Granularity::Token}; }
  at::Tensor score(const ScoringContext&) override { return {}; }
};
}  // namespace

std::unique_ptr<Policy> make_sliding_policy(const PolicyOptions&) { return std::make_unique<SlidingPolicy>(); }

}  // namespace kvbench
