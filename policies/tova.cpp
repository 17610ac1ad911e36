// tova (TOVA): the last real query's softmax attention at the last layer, averaged over heads.
//
// Knob layers=each (--policy tova:layers=each): every layer keeps its own entries, ranked by its own
// newest query averaged over all its heads (kvpress's TOVAPress; with --recent 1 the newest entry, which
// kvpress always keeps, stays too).
// With the pyramid or ada allocator the layers hold different entries, so one layer's attention cannot
// rank the others': each layer's newest query scores that layer's own entries, per KV head (its query
// heads averaged), padding slots at 0 since attention never reads them. Averaged over KV heads, the
// last layer's scores are the token scores above.
#include <algorithm>

#include "common/error.h"

#include "policies/policy.h"

namespace kvbench {

namespace {
class TovaPolicy final : public Policy {
 public:
  explicit TovaPolicy(bool each_layer) : each_layer_(each_layer), per_layer_(each_layer) {}
  std::string name() const override { return "tova"; }
  std::string summary() const override {
    return "true TOVA: last real query's attention, last layer, mean over heads (`layers=each`: each layer its own)";
  }
  PolicyNeeds needs() const override {
    return {false, per_layer_ ? AttentionCapture::AllLayers : AttentionCapture::LastLayer};
  }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, budget.recent, budget.ragged || each_layer_ ? Granularity::PerKvHead : Granularity::Token};
  }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  void prepare(const Preparation& preparation) override {
    ragged_ = preparation.budget.ragged;
    per_layer_ = ragged_ || each_layer_;
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
      const at::Tensor last = probs.select(2, probs.size(2) - 1);  // [B, H, N]
      // A layer's heads hold the same entries unless the cache is ragged: then each KV head ranks its own.
      const at::Tensor newest =
          ragged_ ? last.reshape({B, KV, H / KV, N}).mean(2) : last.mean(1, true).expand({B, KV, N});
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
  bool each_layer_;         // layers=each
  bool ragged_ = false;     // the allocator gives layers and heads sizes of their own
  bool per_layer_ = false;  // layers keep their own entries: score per layer and KV head
  at::Tensor last_query_;   // [B, N] token level, or [B, L, KV, N]
};
}  // namespace

std::unique_ptr<Policy> make_tova_policy(const PolicyOptions& options) {
  return std::make_unique<TovaPolicy>(options.knobs.choice("layers", "last", {"last", "each"}) == "each");
}

}  // namespace kvbench
