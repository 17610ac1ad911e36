// counter-causal-fast: the last layer only, from H^(L−1) (the last layer's input stored during the
// causal pass and compacted with the cache): counter-causal attention over the last layer's cached K/V,
// o_proj and residual, no MLP, then final norm and LM head. O(n²) instead of O(L·n²).
#include "policies/counter_causal_pass.h"

namespace kvbench {

namespace {
class CounterCausalFastPolicy final : public CounterCausalBase {
 public:
  using CounterCausalBase::CounterCausalBase;
  std::string name() const override { return "counter-causal-fast"; }
  std::string summary() const override { return "same from H^(L−1), last layer only, no MLP"; }
  PolicyNeeds needs() const override { return {true, AttentionCapture::None}; }
  std::optional<double> scoring_flops(const ModelConfig& config, int64_t n, const CacheBudget& budget) const override {
    return counter_causal_pass_flops(config, n, budget.min_gap, 1, /*with_mlp=*/false);
  }

 protected:
  CounterCausalPass pass(const ScoringContext& context) const override {
    return {context.cache.held_last_layer_input(), context.model.config().num_layers - 1, /*with_mlp=*/false};
  }
};
}  // namespace

std::unique_ptr<Policy> make_counter_causal_fast_policy(const PolicyOptions& options) {
  return std::make_unique<CounterCausalFastPolicy>(options);
}

}  // namespace kvbench
