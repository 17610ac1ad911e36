// streaming (StreamingLLM): `sinks` attention-sink entries at the start + the newest J − sinks.
// A pure allocation: no scores.
#include <algorithm>

#include "policies/policy.h"

namespace kvbench {

namespace {
class StreamingPolicy final : public Policy {
 public:
  std::string name() const override { return "streaming"; }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, std::max<int64_t>(budget.J - budget.sinks, 0), Granularity::Token, budget.sinks};
  }
  at::Tensor score(const ScoringContext&) override { return {}; }
};
}  // namespace

std::unique_ptr<Policy> make_streaming_policy(const PolicyOptions&) { return std::make_unique<StreamingPolicy>(); }

}  // namespace kvbench
