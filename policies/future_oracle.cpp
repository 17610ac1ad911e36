#include "policies/future_oracle.h"

#include <ATen/core/grad_mode.h>

#include <limits>

namespace kvbench {

namespace {
class FutureOraclePolicy final : public Policy {
 public:
  // Defined targets are fixed (tests); undefined ones are measured in prepare() for every generation.
  explicit FutureOraclePolicy(at::Tensor targets) : targets_(std::move(targets)), look_ahead_(!targets_.defined()) {}
  std::string name() const override { return "future-oracle"; }
  std::string summary() const override {
    return "per KV head: top-k by true future attention mass from a full-cache run (the headroom for any scorer)";
  }
  int64_t default_recent(int64_t J) const override { return J / 4; }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, budget.recent, Granularity::PerKvHead, budget.sinks};
  }
  void prepare(const Preparation& preparation) override {
    if (!look_ahead_) return;
    std::vector<int64_t> ids = preparation.prompt;
    const std::vector<int64_t> future = preparation.full_cache_continuation();
    ids.insert(ids.end(), future.begin(), future.end());
    FutureMassSpec spec;
    spec.window = preparation.budget.recent;
    targets_ = future_oracle_targets(preparation.model, ids, spec);
  }
  at::Tensor score(const ScoringContext& context) override {
    const int64_t S = targets_.size(2);
    std::vector<at::Tensor> layers;
    for (int64_t l = 0; l < context.cache.num_layers(); ++l) {
      const at::Tensor positions = context.cache.head_positions_padded(l).cpu();  // [B, KV, N], -1 = padding
      const at::Tensor table = targets_[l].unsqueeze(0).expand({positions.size(0), -1, -1});
      const at::Tensor known = table.gather(2, positions.clamp(0, S - 1));
      const at::Tensor unknown = (positions >= S).logical_or(positions < 0).logical_or(known.isnan());
      layers.push_back(known.masked_fill(unknown, std::numeric_limits<float>::infinity()));
    }
    return at::stack(layers, 1);
  }

 private:
  at::Tensor targets_;  // [L, KV, S] float32, CPU
  bool look_ahead_;
};
}  // namespace

std::unique_ptr<Policy> future_oracle_policy(at::Tensor targets) {
  return std::make_unique<FutureOraclePolicy>(std::move(targets));
}

// The registry's instance measures the future of each prompt it generates for.
std::unique_ptr<Policy> make_future_oracle_policy(const PolicyOptions&) {
  return std::make_unique<FutureOraclePolicy>(at::Tensor());
}

at::Tensor future_oracle_targets(const Model& model, const std::vector<int64_t>& ids, const FutureMassSpec& spec) {
  at::NoGradGuard no_grad;
  const auto device = model.options().device();
  const at::Tensor tokens = at::tensor(ids, at::kLong).unsqueeze(0).to(device);
  std::vector<QueryKeyValue> layers;
  model.forward_sequence(tokens, at::arange(tokens.size(1), tokens.options()).unsqueeze(0), &layers);
  std::vector<at::Tensor> targets;
  for (const auto& qkv : layers) targets.push_back(future_mass_targets(qkv.q, qkv.k, spec)[0].to(at::kFloat).cpu());
  return at::stack(targets);
}

}  // namespace kvbench
