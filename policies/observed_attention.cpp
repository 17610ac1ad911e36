// observed-attention (kvpress's ObservedAttentionPress, the H2O score normalised): the attention real
// queries paid each entry, divided by how many queries could see it (those at its position and after),
// per layer and KV head (query heads of a group averaged). Unlike h2o-true's plain sum, old entries are
// not favoured for having been seen longer. In the refresh loop the sum and the count run over every
// query since the entry entered the cache.
#include "policies/attention_mass.h"
#include "policies/layer_scores.h"
#include "policies/policy.h"

namespace kvbench {

namespace {
class ObservedAttentionPolicy final : public Policy {
 public:
  std::string name() const override { return "observed-attention"; }
  std::string summary() const override {
    return "per KV head: attention of real queries per query that saw the entry (kvpress ObservedAttentionPress)";
  }
  PolicyNeeds needs() const override { return {false, AttentionCapture::AllLayers}; }
  KeepRule keep_rule(const CacheBudget& budget) const override { return {false, budget.recent, Granularity::PerKvHead}; }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  void observe(const ForwardResult& step, const KvCache& cache) override {
    mass_.add(step, cache.keys(0).size(1));
    fed_ += step.attention.front().size(2);
  }
  at::Tensor score(const ScoringContext& context) override {
    const at::Tensor held = context.cache.all_positions();  // [B, N] token level (every layer and head), or [B, L, KV, N]
    const at::Tensor positions = held.dim() == 2 ? held.unsqueeze(1).unsqueeze(1) : held;
    const at::Tensor queries_seen = (fed_ - positions).clamp_min(1);  // padding: any > 0
    return mass_.value() / queries_seen.to(mass_.value().options());
  }
  void on_compact(const at::Tensor& keep) override { mass_.compact(keep); }
  void expand_batch(int64_t batch) override { mass_.expand_batch(batch); }
  void reset() override {
    mass_.reset();
    fed_ = 0;
  }

 private:
  AttentionMass mass_;
  int64_t fed_ = 0;  // tokens fed so far: a query at position p sees the entries at positions ≤ p
};
}  // namespace

std::unique_ptr<Policy> make_observed_attention_policy(const PolicyOptions&) {
  return std::make_unique<ObservedAttentionPolicy>();
}

}  // namespace kvbench
