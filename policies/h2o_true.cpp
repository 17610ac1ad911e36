// h2o-true (H2O as published): heavy hitters by the attention that real decode/prefill queries paid
// each entry, accumulated step by step, kept per KV head (each layer/KV head its own set), plus the
// recent window. Unlike the reference's `h2o` proxy, no keys stand in for queries.
#include "policies/attention_mass.h"
#include "policies/policy.h"

namespace kvbench {

namespace {
class H2oTruePolicy final : public Policy {
 public:
  std::string name() const override { return "h2o-true"; }
  std::string summary() const override {
    return "H2O as published: attention of real queries accumulated per KV head (per-head eviction)";
  }
  PolicyNeeds needs() const override { return {false, AttentionCapture::AllLayers}; }
  int64_t default_recent(int64_t J) const override { return J / 2; }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, budget.recent, Granularity::PerKvHead};
  }
  void observe(const ForwardResult& step, const KvCache& cache) override {
    mass_.add(step, cache.keys(0).size(1));
  }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  at::Tensor score(const ScoringContext&) override { return mass_.value(); }
  void on_compact(const at::Tensor& keep) override { mass_.compact(keep); }
  void expand_batch(int64_t batch) override { mass_.expand_batch(batch); }
  void reset() override { mass_.reset(); }

 private:
  AttentionMass mass_;
};
}  // namespace

std::unique_ptr<Policy> make_h2o_true_policy(const PolicyOptions&) { return std::make_unique<H2oTruePolicy>(); }

}  // namespace kvbench
