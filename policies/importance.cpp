// importance — the paper's "Importance" proxy, exactly as the reference code computes it: the last
// layer's body keys (after the frozen prefix) scaled by their max |k|, the last key as the query,
// dot products averaged over KV heads. (True last-query attention is `tova`.)
#include "policies/policy.h"

namespace kvbench {

namespace {
class ImportancePolicy final : public Policy {
 public:
  std::string name() const override { return "importance"; }
  at::Tensor score(const ScoringContext& context) override {
    const KvCache& cache = context.cache;
    const int64_t n = cache.size(), F = std::min(context.budget.frozen, n);
    at::Tensor body = cache.keys(cache.num_layers() - 1).narrow(2, F, n - F).to(at::kFloat);  // [B, KV, n-F, D]
    const at::Tensor scale = body.abs().amax({1, 2, 3}, /*keepdim=*/true).clamp_min(1e-6);
    body = body / scale;
    const at::Tensor query = body.narrow(2, n - F - 1, 1);
    const at::Tensor body_scores = (body * query).sum(-1).mean(1);  // [B, n-F]
    return at::cat({at::zeros({cache.batch(), F}, body_scores.options()), body_scores}, 1);
  }
};
}  // namespace

std::unique_ptr<Policy> make_importance_policy(const PolicyOptions&) { return std::make_unique<ImportancePolicy>(); }

}  // namespace kvbench
