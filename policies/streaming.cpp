// streaming (StreamingLLM): `sinks` attention-sink entries at the start + the newest J − sinks.
// A pure allocation: no scores.
#include <algorithm>

#include "policies/rule_policy.h"

namespace kvbench {

std::unique_ptr<Policy> make_streaming_policy(const PolicyOptions&) {
  return position_rule(
      "streaming", "`--sinks` first entries + the newest J − sinks",
      [](const CacheBudget& budget) { return std::max<int64_t>(budget.J - budget.sinks, 0); },
      [](const CacheBudget& budget) { return budget.sinks; });
}

}  // namespace kvbench
