// streaming (StreamingLLM): `sinks` attention-sink entries at the start + the newest J − sinks.
// Scores prefer older slots, so the J − recent candidates kept are the first ones: the sinks.
#include <algorithm>

#include "policies/policy.h"

namespace kvbench {

namespace {
class StreamingPolicy final : public Policy {
 public:
  std::string name() const override { return "streaming"; }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, std::max<int64_t>(budget.J - budget.sinks, 0), Granularity::Token};
  }
  at::Tensor score(const ScoringContext& context) override {
    const KvCache& cache = context.cache;
    return -at::arange(cache.size(), at::kFloat).unsqueeze(0).expand({cache.batch(), cache.size()});
  }
};
}  // namespace

std::unique_ptr<Policy> make_streaming_policy(const PolicyOptions&) { return std::make_unique<StreamingPolicy>(); }

}  // namespace kvbench
