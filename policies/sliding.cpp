// sliding: the frozen prefix + the newest J entries. No scores: the whole budget is the recent window.
#include "policies/rule_policy.h"

namespace kvbench {

std::unique_ptr<Policy> make_sliding_policy(const PolicyOptions&) {
  return position_rule("sliding", "frozen prefix + the newest J", [](const CacheBudget& budget) { return budget.J; });
}

}  // namespace kvbench
