// importance — the paper's "Importance" proxy, exactly as the reference code computes it: the last
// layer's body keys (after the frozen prefix) scaled by their max |k|, the last key as the query,
// dot products averaged over KV heads. (True last-query attention is `tova`.)
//
// With the pyramid allocator each layer holds its own entries, and a token the last layer dropped has no
// last-layer key: each layer then scores its own entries by the same proxy over its own keys (its body,
// its max |k|, its newest key as the query), a token score shared by the layer's heads, which pyramid
// keeps aligned (they rank the same scores). Padding slots (none under pyramid) would score 0.
#include "policies/policy.h"

namespace kvbench {

namespace {

// The proxy over keys [B, KV, n, D] of one layer, the first F slots frozen: [B, n] float32 (frozen: 0).
at::Tensor importance_of(const at::Tensor& keys, int64_t F) {
  const int64_t n = keys.size(2);
  at::Tensor body = keys.narrow(2, F, n - F).to(at::kFloat);  // [B, KV, n-F, D]
  const at::Tensor scale = body.abs().amax({1, 2, 3}, /*keepdim=*/true).clamp_min(1e-6);
  body = body / scale;
  const at::Tensor query = body.narrow(2, n - F - 1, 1);
  const at::Tensor body_scores = (body * query).sum(-1).mean(1);  // [B, n-F]
  return at::cat({at::zeros({keys.size(0), F}, body_scores.options()), body_scores}, 1);
}

class ImportancePolicy final : public Policy {
 public:
  std::string name() const override { return "importance"; }
  std::string summary() const override {
    return "the paper's Importance proxy (last-layer keys / max\\|k\\|, last key as query)";
  }
  ScoreKind score_kind() const override { return ScoreKind::PerToken; }
  at::Tensor score(const ScoringContext& context) override {
    const KvCache& cache = context.cache;
    if (!context.budget.ragged)
      return importance_of(cache.keys(cache.num_layers() - 1), std::min(context.budget.frozen, cache.size()));
    std::vector<at::Tensor> layers;
    for (int64_t l = 0; l < cache.num_layers(); ++l) {
      const at::Tensor positions = cache.head_positions_padded(l);  // [B, KV, N], -1 = padding
      const int64_t n = cache.size(l);
      const at::Tensor scores = importance_of(cache.keys(l), std::min(context.budget.frozen, n));
      const at::Tensor padded = at::constant_pad_nd(scores, {0, cache.size() - n}).unsqueeze(1).expand_as(positions);
      layers.push_back(padded.masked_fill(positions.lt(0), 0.0));
    }
    return at::stack(layers, 1);  // [B, L, KV, N]
  }
};
}  // namespace

std::unique_ptr<Policy> make_importance_policy(const PolicyOptions&) { return std::make_unique<ImportancePolicy>(); }

}  // namespace kvbench
