// h2o — the paper's H2O proxy, as the reference code computes it. Body = entries after the frozen
// prefix; in every layer the newest min(recent, body) body *keys* act as queries; softmax over the
// whole body (recent window included) with scale 1/sqrt(head_dim), summed over those queries,
// averaged over KV heads and layers; added to a running accumulator (new entries enter at 0) that is
// compacted with the cache. (Attention of real decode queries is `h2o-true`.)
//
// The reference reuses one hook per dataset, so its accumulator leaks into the next sample; that is
// reproduced only with PolicyOptions::h2o_leak_across_samples: the previous sample's accumulator is
// then carried over whenever it is no longer than the new cache (otherwise it restarts at 0).
#include <cmath>

#include "policies/policy.h"

namespace kvbench {

namespace {
class H2oPolicy final : public Policy {
 public:
  explicit H2oPolicy(bool leak) : leak_(leak) {}
  std::string name() const override { return "h2o"; }
  int64_t default_recent(int64_t J) const override { return J / 2; }
  void reset() override {
    if (!leak_) accumulator_ = at::Tensor();
  }
  void expand_batch(int64_t batch) override {
    if (accumulator_.defined()) accumulator_ = accumulator_.expand({batch, accumulator_.size(1)}).contiguous();
  }
  void on_compact(const at::Tensor& keep) override { accumulator_ = accumulator_.gather(1, keep.to(accumulator_.device())); }

  at::Tensor score(const ScoringContext& context) override {
    const KvCache& cache = context.cache;
    const int64_t n = cache.size();
    grow_accumulator(cache);
    const int64_t F = std::min(context.budget.frozen, n), body = n - F;
    const int64_t queries = std::min(context.budget.recent, body);
    if (queries <= 0) return accumulator_;
    at::Tensor increment = at::zeros({cache.batch(), body}, accumulator_.options());
    for (int64_t l = 0; l < cache.num_layers(); ++l) {
      const at::Tensor keys = cache.keys(l).narrow(2, F, body).to(at::kFloat);  // [B, KV, body, D]
      const at::Tensor q = keys.narrow(2, body - queries, queries);
      const at::Tensor probs = at::softmax(at::matmul(q, keys.transpose(-1, -2)) / std::sqrt(double(keys.size(-1))), -1);
      increment += probs.sum(2).mean(1).to(at::kDouble) / static_cast<double>(cache.num_layers());
    }
    accumulator_.narrow(1, F, body).add_(increment);
    return accumulator_;
  }

 private:
  // Entries appended since the last refresh start at 0.
  void grow_accumulator(const KvCache& cache) {
    const auto options = at::TensorOptions().dtype(at::kDouble).device(cache.positions().device());
    if (!accumulator_.defined() || accumulator_.size(1) > cache.size() || accumulator_.size(0) != cache.batch())
      accumulator_ = at::zeros({cache.batch(), 0}, options);
    const int64_t missing = cache.size() - accumulator_.size(1);
    accumulator_ = at::cat({accumulator_, at::zeros({cache.batch(), missing}, options)}, 1);
  }

  bool leak_;
  at::Tensor accumulator_;  // [B, N] float64
};
}  // namespace

std::unique_ptr<Policy> make_h2o_policy(const PolicyOptions& options) {
  return std::make_unique<H2oPolicy>(options.h2o_leak_across_samples);
}

}  // namespace kvbench
