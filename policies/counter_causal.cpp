// counter-causal: s_i = 1 − P(x_i | x_{i+1..t}), approximated by one counter-causal pass of the whole
// model over the cached tokens, reusing every layer's cached K/V and computing only fresh queries.
// The entries whose own token is most predictable from their future (highest logit) are evicted.
// Qwen3's q-norm is applied to the fresh queries (the reference code forgets it: the knob q_norm=false,
// which the `reference` profile sets).
#include "policies/counter_causal_pass.h"

namespace kvbench {

namespace {
class CounterCausalPolicy final : public CounterCausalBase {
 public:
  using CounterCausalBase::CounterCausalBase;
  std::string name() const override { return "counter-causal"; }
  std::string summary() const override {
    return "lowest counter-causal logit: full counter-causal pass reusing cached K/V of every layer";
  }
  std::optional<double> scoring_flops(const ModelConfig& config, int64_t n, const CacheBudget& budget) const override {
    return counter_causal_pass_flops(config, n, budget.min_gap, config.num_layers, /*with_mlp=*/true);
  }

 protected:
  CounterCausalPass pass(const ScoringContext& context) const override {
    return {context.model.embed(context.cache.held_token_ids()), 0, /*with_mlp=*/true};
  }
};
}  // namespace

std::unique_ptr<Policy> make_counter_causal_policy(const PolicyOptions& options) {
  return std::make_unique<CounterCausalPolicy>(options);
}

}  // namespace kvbench
