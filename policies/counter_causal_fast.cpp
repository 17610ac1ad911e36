// counter-causal-fast: the last layer only, from H^(L−1) (the last layer's input stored during the
// causal pass and compacted with the cache): anti-causal attention over the last layer's cached K/V,
// o_proj and residual, no MLP, then final norm and LM head. O(n²) instead of O(L·n²).
#include "policies/anticausal.h"

namespace kvbench {

namespace {
class CounterCausalFastPolicy final : public Policy {
 public:
  std::string name() const override { return "counter-causal-fast"; }
  PolicyNeeds needs() const override { return {true, AttentionCapture::None}; }
  KeepRule keep_rule(const CacheBudget& budget) const override { return counter_causal_keep_rule(budget); }
  at::Tensor score(const ScoringContext& context) override {
    const Model& model = context.model;
    return anticausal_scores(model, context.cache, context.cache.last_layer_input(), model.config().num_layers - 1,
                             /*with_mlp=*/false, context.budget.min_gap);
  }
};
}  // namespace

std::unique_ptr<Policy> make_counter_causal_fast_policy(const PolicyOptions&) {
  return std::make_unique<CounterCausalFastPolicy>();
}

}  // namespace kvbench
