// knorm (Devoto et al. 2024, kvpress's KnormPress): a key of small L2 norm draws much attention, so each
// layer and KV head keeps its entries of smallest key norm (score −‖k‖, in float32 as kvpress).
#include "policies/layer_scores.h"
#include "policies/policy.h"

namespace kvbench {

namespace {
class KnormPolicy final : public Policy {
 public:
  std::string name() const override { return "knorm"; }
  KeepRule keep_rule(const CacheBudget& budget) const override { return {false, budget.recent, Granularity::PerKvHead}; }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  at::Tensor score(const ScoringContext& context) override {
    return score_each_layer(context.cache, [&](int64_t l, const at::Tensor&) {
      return -at::linalg_vector_norm(context.cache.keys(l), 2, {-1}, false, at::kFloat);
    });
  }
};
}  // namespace

std::unique_ptr<Policy> make_knorm_policy(const PolicyOptions&) { return std::make_unique<KnormPolicy>(); }

}  // namespace kvbench
