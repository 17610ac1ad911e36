// finch (FINCH, Corallo & Papotti 2024, as kvpress's FinchPress): the question observes the context. It sits at
// the end of the compressed prompt (--pipeline kvpress --compress-questions), tokenized apart from the context as
// kvpress's delimiter token splits it. Per layer and query head, each question query's attention on the entries
// before the question, weighted by the query's position (kvpress's normalize_scores: the count of entries before
// it), averaged over the question and then over each KV head's query group. The question's entries stay.
// Knobs: normalize (default true); rerotate (default true: the kept keys move to positions 0, 1, …, and what is
// fed after them follows, as kvpress's rerotate_keys; engine/refresh.cpp).
#include "common/error.h"
#include "policies/layer_scores.h"
#include "policies/policy.h"

namespace kvbench {

namespace {
class FinchPolicy final : public Policy {
 public:
  FinchPolicy(bool normalize, bool rerotate) : normalize_(normalize), rerotate_(rerotate) {}
  std::string name() const override { return "finch"; }
  std::string summary() const override {
    return "per KV head: attention of the question (inside the compressed prompt) on the context, each query "
           "weighted by its position; the question stays; kept keys rerotated (kvpress FinchPress)";
  }
  PolicyNeeds needs() const override {
    PolicyNeeds needs;
    needs.step_attention = AttentionCapture::AllLayers;
    needs.query_window = true;
    return needs;
  }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    KeepRule rule{false, std::max(budget.recent, window_), Granularity::PerKvHead};
    rule.rerotate = rerotate_;
    return rule;
  }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }

  void prepare(const Preparation& preparation) override {
    window_ = preparation.query_window;
    if (window_ <= 0)
      fail("finch scores by the question's attention: run it with --pipeline kvpress --compress-questions, which "
           "put the question inside the compressed prompt");
    if (preparation.budget.mode != CacheBudget::Mode::PrefillEnd)
      fail("finch compresses once, at the end of the question: run it with --mode prefill_end");
  }

  // The forward that ends with the question (kvpress's one-shot press) leaves the observation; later ones add none
  // (it scores once: --mode prefill_end).
  void observe(const ForwardResult& step, const KvCache&) override {
    const int64_t T = step.attention.front().size(2);
    if (!mass_.empty() || T < window_) return;
    for (const at::Tensor& probs : step.attention) {  // [B, H, T, N]
      const int64_t N = probs.size(3);
      at::Tensor rows = probs.narrow(2, T - window_, window_).narrow(3, 0, N - window_);
      if (normalize_) rows = rows * at::arange(N - window_, N, rows.options()).view({1, 1, window_, 1});
      mass_.push_back(rows.mean(2));  // [B, H, N − window]
    }
  }

  at::Tensor score(const ScoringContext& context) override {
    return score_each_layer(context.cache, [&](int64_t l, const at::Tensor& positions) {
      const at::Tensor& mean = mass_.at(l);
      const int64_t B = mean.size(0), KV = positions.size(1), group = mean.size(1) / KV;
      const at::Tensor scores = mean.view({B, KV, group, mean.size(2)}).mean(2);
      return at::constant_pad_nd(scores, {0, window_}, scores.max().item<double>() + 1);
    });
  }

  void reset() override { mass_.clear(); }

 private:
  bool normalize_, rerotate_;
  int64_t window_ = 0;
  std::vector<at::Tensor> mass_;  // per layer [B, H, N − window]: the question's weighted attention, averaged
};
}  // namespace

std::unique_ptr<Policy> make_finch_policy(const PolicyOptions& options) {
  const bool normalize = options.knobs.boolean("normalize", true);
  const bool rerotate = options.knobs.boolean("rerotate", true);
  return std::make_unique<FinchPolicy>(normalize, rerotate);
}

}  // namespace kvbench
