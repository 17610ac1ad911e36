// snapkv (SnapKV, Li et al. 2024, as kvpress's SnapKVPress): the newest queries observe the cache. Per
// layer and query head, their mean attention on each entry outside the newest `window` positions,
// average-pooled over `kernel` neighbouring entries (zero beyond the ends, as avg_pool1d pads) so that a
// kept entry keeps its neighbours; then averaged over each KV head's query group. The window's own entries
// score above every other (and the recent window defaults to `window`), so they stay.
//
// The observing queries: a prefill chunk's newest `window` (at the end of the prompt: kvpress's one-shot
// press), then in decode every query since the last refresh — the newest queries a refresh can see
// without keeping each one's attention apart.
// Knobs: window (1..4096, default 64), kernel (odd, 1..63, default 5), e.g. --policy snapkv:window=32,kernel=7.
#include "common/error.h"
#include "policies/layer_scores.h"
#include "policies/policy.h"

namespace kvbench {

namespace {
class SnapKvPolicy final : public Policy {
 public:
  SnapKvPolicy(int64_t window, int64_t kernel) : window_(window), kernel_(kernel) {}
  std::string name() const override { return "snapkv"; }
  std::string summary() const override {
    return "per KV head: attention of the newest `window` queries outside the window, pooled over `kernel` "
           "neighbours; the window stays (kvpress SnapKVPress)";
  }
  PolicyNeeds needs() const override { return {false, AttentionCapture::AllLayers}; }
  int64_t default_recent(int64_t) const override { return window_; }
  KeepRule keep_rule(const CacheBudget& budget) const override { return {false, budget.recent, Granularity::PerKvHead}; }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }

  void observe(const ForwardResult& step, const KvCache&) override {
    const int64_t T = step.attention.front().size(2), newest = std::min(window_, T);
    // A prefill chunk observes with its own newest queries; decode steps add theirs.
    if (T > 1 || mass_.size() != step.attention.size()) restart(step.attention.size());
    for (size_t l = 0; l < step.attention.size(); ++l) {
      const at::Tensor& probs = step.attention[l];  // [B, H, T, N_l]
      const at::Tensor mass = probs.narrow(2, T - newest, newest).sum(2);
      at::Tensor& sum = mass_[l];
      sum = sum.defined() ? at::constant_pad_nd(sum, {0, mass.size(2) - sum.size(2)}) + mass : mass;
    }
    queries_ += newest;
    fed_ += T;
  }

  at::Tensor score(const ScoringContext& context) override {
    return score_each_layer(context.cache, [&](int64_t l, const at::Tensor& positions) {
      const int64_t KV = positions.size(1), N = positions.size(2);
      const at::Tensor mean = mass_.at(l) / static_cast<double>(queries_);  // [B, H, N]
      const int64_t group = mean.size(1) / KV;
      const at::Tensor in_window = positions.ge(fed_ - window_);
      const at::Tensor outside = positions.ge(0).logical_and(in_window.logical_not()).repeat_interleave(group, 1);
      const at::Tensor pooled = at::avg_pool1d(mean * outside, {kernel_}, {1}, {kernel_ / 2});
      const at::Tensor scores = pooled.view({pooled.size(0), KV, group, N}).mean(2);
      return scores.masked_fill(in_window, scores.max().item<double>() + 1);
    });
  }

  void on_compact(const at::Tensor&) override { restart(mass_.size()); }  // the next refresh sees the queries after this one
  void expand_batch(int64_t batch) override {
    for (at::Tensor& sum : mass_)  // undefined after a refresh at the end of the prompt
      if (sum.defined()) sum = sum.expand({batch, sum.size(1), sum.size(2)}).contiguous();
  }
  void reset() override {
    restart(0);
    fed_ = 0;
  }

 private:
  void restart(size_t layers) {
    mass_.assign(layers, at::Tensor());
    queries_ = 0;
  }

  int64_t window_, kernel_;
  std::vector<at::Tensor> mass_;  // per layer [B, H, N_l]: the observing queries' attention, summed
  int64_t queries_ = 0;  // how many queries that sum holds
  int64_t fed_ = 0;      // tokens fed so far
};
}  // namespace

std::unique_ptr<Policy> make_snapkv_policy(const PolicyOptions& options) {
  const int64_t window = options.knobs.integer("window", 64, 1, 4096);
  const int64_t kernel = options.knobs.integer("kernel", 5, 1, 63);
  if (kernel % 2 == 0) fail("{}: kernel must be odd (got {})", options.knobs.context(), kernel);
  return std::make_unique<SnapKvPolicy>(window, kernel);
}

}  // namespace kvbench
