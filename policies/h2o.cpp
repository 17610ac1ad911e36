// h2o — the paper's H2O proxy, as the reference code computes it. Body = entries after the frozen
// prefix; in every layer the newest min(recent, body) body *keys* act as queries; softmax over the
// whole body (recent window included) with scale 1/sqrt(head_dim), summed over those queries,
// averaged over KV heads and layers; added to a running accumulator (new entries enter at 0) that is
// compacted with the cache; it accumulates at every refresh point, evicting or not, as the reference's hook
// is called at each. (Attention of real decode queries is `h2o-true`.)
//
// The reference reuses one hook per dataset, so its accumulator leaks into the next sample; that is
// reproduced only with the knob carry=true (the reference profile sets it): the previous sample's
// accumulator is then carried over whenever it is no longer than the new cache (otherwise it restarts at 0).
//
// Ragged caches (the pyramid allocator): layers hold different entries, so the accumulator is kept by
// original position instead. Each layer adds, for the entries it holds, its increment as above (its
// newest min(recent, body) keys as queries over its own body, averaged over KV heads, divided by the
// number of layers), so a token's score is one number shared by every layer that holds it.
#include <cmath>

#include "policies/policy.h"

namespace kvbench {

namespace {
class H2oPolicy final : public Policy {
 public:
  explicit H2oPolicy(bool leak) : leak_(leak) {}
  std::string name() const override { return "h2o"; }
  std::string summary() const override { return "the paper's H2O proxy (keys as queries, accumulated; recent J/2)"; }
  int64_t default_recent(int64_t J) const override { return J / 2; }
  PolicyNeeds needs() const override {
    PolicyNeeds needs;
    needs.every_refresh_point = true;
    return needs;
  }
  bool carries_across_samples() const override { return leak_; }
  void reset() override {
    if (!leak_) accumulator_ = at::Tensor();
    by_position_ = at::Tensor();
  }
  ScoreKind score_kind() const override { return ScoreKind::PerToken; }
  void expand_batch(int64_t batch) override {
    if (accumulator_.defined()) accumulator_ = accumulator_.expand({batch, accumulator_.size(1)}).contiguous();
    if (by_position_.defined()) by_position_ = by_position_.expand({batch, by_position_.size(1)}).contiguous();
  }
  void on_compact(const at::Tensor& keep) override {
    if (keep.dim() == 2) {
      accumulator_ = accumulator_.gather(1, keep.to(accumulator_.device()));
    } else if (accumulator_.defined()) {  // the first ragged compaction: from slots to original positions
      by_position_ = at::zeros({accumulator_.size(0), scored_positions_.max().item<int64_t>() + 1}, accumulator_.options());
      by_position_.scatter_(1, scored_positions_, accumulator_);
      accumulator_ = at::Tensor();
    }
  }

  at::Tensor score(const ScoringContext& context) override {
    const KvCache& cache = context.cache;
    if (cache.per_head()) return score_by_position(context);
    const int64_t n = cache.size();
    grow_accumulator(cache);
    scored_positions_ = cache.positions().clone();  // the cache overwrites its storage when it compacts
    const int64_t F = std::min(context.budget.frozen, n), body = n - F;
    const int64_t queries = std::min(context.budget.recent, body);
    if (queries <= 0) return accumulator_;
    at::Tensor increment = at::zeros({cache.batch(), body}, accumulator_.options());
    for (int64_t l = 0; l < cache.num_layers(); ++l) increment += layer_increment(cache, l, F, body, queries);
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

  // Layer l's share of the increment of body slots [F, F + body): [B, body] float64.
  static at::Tensor layer_increment(const KvCache& cache, int64_t l, int64_t F, int64_t body, int64_t queries) {
    const at::Tensor keys = cache.keys(l).narrow(2, F, body).to(at::kFloat);  // [B, KV, body, D]
    const at::Tensor q = keys.narrow(2, body - queries, queries);
    const at::Tensor probs = at::softmax(at::matmul(q, keys.transpose(-1, -2)) / std::sqrt(double(keys.size(-1))), -1);
    return probs.sum(2).mean(1).to(at::kDouble) / static_cast<double>(cache.num_layers());
  }

  // A ragged cache: every head of a layer holds the same entries (pyramid), read from head 0.
  at::Tensor score_by_position(const ScoringContext& context) {
    const KvCache& cache = context.cache;
    const int64_t last = cache.all_positions().max().item<int64_t>();
    if (by_position_.size(1) <= last)  // entries fed since start at 0
      by_position_ = at::constant_pad_nd(by_position_, {0, last + 1 - by_position_.size(1)});
    at::Tensor increment = at::zeros_like(by_position_);
    for (int64_t l = 0; l < cache.num_layers(); ++l) {
      const int64_t n = cache.size(l), F = std::min(context.budget.frozen, n), body = n - F;
      const int64_t queries = std::min(context.budget.recent, body);
      if (queries <= 0) continue;
      const at::Tensor positions = cache.head_positions(l).select(1, 0).narrow(1, F, body).to(increment.device());
      increment.scatter_add_(1, positions, layer_increment(cache, l, F, body, queries));
    }
    by_position_ += increment;
    std::vector<at::Tensor> layers;
    for (int64_t l = 0; l < cache.num_layers(); ++l) {
      const at::Tensor positions = cache.head_positions_padded(l).to(by_position_.device());  // [B, KV, N]
      const at::Tensor table = by_position_.unsqueeze(1).expand({cache.batch(), positions.size(1), by_position_.size(1)});
      layers.push_back(table.gather(2, positions.clamp_min(0)));
    }
    return at::stack(layers, 1);  // [B, L, KV, N]
  }

  bool leak_;
  at::Tensor accumulator_;       // [B, N] float64, by slot (token-level cache)
  at::Tensor scored_positions_;  // [B, N]: the positions accumulator_ was last scored at
  at::Tensor by_position_;       // [B, positions] float64, by original position (ragged cache)
};
}  // namespace

std::unique_ptr<Policy> make_h2o_policy(const PolicyOptions& options) {
  return std::make_unique<H2oPolicy>(options.knobs.boolean("carry", false));
}

}  // namespace kvbench
