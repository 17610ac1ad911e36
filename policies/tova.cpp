// tova (TOVA): the last real query's softmax attention at the last layer, averaged over heads.
//
// With the pyramid or ada allocator the layers hold different entries, so one layer's attention cannot
// rank the others': each layer's newest query scores that layer's own entries, per KV head (its query
// heads averaged), padding slots at 0 since attention never reads them. Averaged over KV heads, the
// last layer's scores are the token scores above.
#include <algorithm>

#include "engine/generate.h"  // up: prepare() receives GenerationSettings (policy.h), read for its budget
#include "policies/policy.h"

namespace kvbench {

namespace {
class TovaPolicy final : public Policy {
 public:
  std::string name() const override { return "tova"; }
  PolicyNeeds needs() const override {
    return {false, per_layer_ ? AttentionCapture::AllLayers : AttentionCapture::LastLayer};
  }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, budget.recent, budget.ragged ? Granularity::PerKvHead : Granularity::Token};
  }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  void prepare(const Model&, const std::vector<int64_t>&, const GenerationSettings& settings, const StopCheck&) override {
    per_layer_ = settings.budget.ragged;
  }
  void observe(const ForwardResult& step, const KvCache& cache) override {
    if (!per_layer_) {
      const at::Tensor& probs = step.attention.back();  // [B, H, T, N]
      last_query_ = probs.select(2, probs.size(2) - 1).mean(1);  // [B, N]
      return;
    }
    const int64_t KV = cache.keys(0).size(1);
    int64_t widest = 0;
    for (const at::Tensor& probs : step.attention) widest = std::max(widest, probs.size(3));
    std::vector<at::Tensor> layers;
    for (const at::Tensor& probs : step.attention) {  // [B, H, T, N_l]
      const int64_t B = probs.size(0), H = probs.size(1), N = probs.size(3);
      const at::Tensor newest = probs.select(2, probs.size(2) - 1).reshape({B, KV, H / KV, N}).mean(2);
      layers.push_back(at::constant_pad_nd(newest, {0, widest - N}));
    }
    last_query_ = at::stack(layers, 1);  // [B, L, KV, N]
  }
  void expand_batch(int64_t batch) override {
    std::vector<int64_t> shape(last_query_.sizes().begin(), last_query_.sizes().end());
    shape[0] = batch;
    last_query_ = last_query_.expand(shape);
  }
  at::Tensor score(const ScoringContext&) override { return last_query_; }

 private:
  bool per_layer_ = false;  // the allocator gives layers their own entries: score per layer and KV head
  at::Tensor last_query_;   // [B, N] token level, or [B, L, KV, N]
};
}  // namespace

std::unique_ptr<Policy> make_tova_policy(const PolicyOptions&) { return std::make_unique<TovaPolicy>(); }

}  // namespace kvbench
