// kvpop (KVpop): a fixed budget per KV head — s attention sinks + w protected recent entries + k
// long-range entries chosen by a scorer (J = s + w + k). The scorer is a learned per-head model of
// each entry's future attention mass (--scorer FILE, see `kvbench train-scorer`); without one the
// documented untrained fallback is the attention mass real queries paid so far (as h2o-true).
#include "policies/attention_mass.h"
#include "policies/policy.h"
#include "policies/retention_scorer.h"

namespace kvbench {

namespace {
class KvpopPolicy final : public Policy {
 public:
  explicit KvpopPolicy(std::unique_ptr<RetentionScorer> scorer) : scorer_(std::move(scorer)) {}
  std::string name() const override { return "kvpop"; }
  PolicyNeeds needs() const override {
    return {false, scorer_ ? AttentionCapture::None : AttentionCapture::AllLayers};
  }
  int64_t default_recent(int64_t J) const override { return J / 4; }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, budget.recent, Granularity::PerKvHead, budget.sinks};
  }
  void observe(const ForwardResult& step, const KvCache& cache) override {
    if (!scorer_) mass_.add(step, cache.keys(0).size(1));
  }
  at::Tensor score(const ScoringContext& context) override {
    if (!scorer_) return mass_.value();
    std::vector<at::Tensor> layers;
    for (int64_t l = 0; l < context.cache.num_layers(); ++l)
      layers.push_back(scorer_->score(context.model, l, context.cache.keys(l), context.cache.values(l),
                                      context.cache.head_positions(l)));
    return at::stack(layers, 1);
  }
  void on_compact(const at::Tensor& keep) override {
    if (!scorer_) mass_.compact(keep);
  }
  void expand_batch(int64_t batch) override { mass_.expand_batch(batch); }
  void reset() override { mass_.reset(); }

 private:
  std::unique_ptr<RetentionScorer> scorer_;
  AttentionMass mass_;
};
}  // namespace

std::unique_ptr<Policy> make_kvpop_policy(const PolicyOptions& options) {
  return std::make_unique<KvpopPolicy>(options.scorer_path.empty() ? nullptr
                                                                    : load_retention_scorer(options.scorer_path));
}

}  // namespace kvbench
