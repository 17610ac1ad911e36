// keydiff (Park et al. 2025, kvpress's KeyDiffPress): keep the keys least like the rest. Each layer and
// KV head averages its unit-length keys into an anchor and scores an entry −cos(k, anchor), so the most
// distinctive keys stay. Needs no attention, hence works with any attention kernel.
#include "policies/layer_scores.h"
#include "policies/policy.h"

namespace kvbench {

namespace {
class KeyDiffPolicy final : public Policy {
 public:
  std::string name() const override { return "keydiff"; }
  KeepRule keep_rule(const CacheBudget& budget) const override { return {false, budget.recent, Granularity::PerKvHead}; }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  at::Tensor score(const ScoringContext& context) override {
    const KvCache& cache = context.cache;
    return score_each_layer(cache, [&](int64_t l, const at::Tensor& positions) {
      const at::Tensor keys = cache.keys(l).to(at::kFloat);  // [B, KV, N, D]
      const at::Tensor unit = keys / keys.norm(2, {-1}, true).clamp_min(1e-12);  // F.normalize
      // The anchor averages the entries a head holds: a ragged cache's padding slots are left out.
      const at::Tensor held = positions.ge(0).unsqueeze(-1);
      const at::Tensor anchor = cache.ragged() ? (unit * held).sum(2, true) / held.sum(2, true).clamp_min(1)
                                               : unit.mean(2, true);
      return -at::cosine_similarity(keys, anchor, -1);
    });
  }
};
}  // namespace

std::unique_ptr<Policy> make_keydiff_policy(const PolicyOptions&) { return std::make_unique<KeyDiffPolicy>(); }

}  // namespace kvbench
