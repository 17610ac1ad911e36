// expected-attention (kvpress's ExpectedAttentionPress, Devoto et al. 2025): the attention that queries
// still to come are expected to pay each entry. Each layer's queries so far (before RoPE, past the first
// `--sinks` positions) give every query head a mean μ and covariance Σ; RoPE averaged over the next
// `future` positions (R̄) carries them forward; an entry's expected logit is k·R̄μ/√d + kᵀR̄ΣR̄ᵀk/(2d), the
// log of a Gaussian query's mean exp. Softmax over the entries past the sinks, mean over each KV head's
// query heads, times ‖v‖. The sinks stay (kept by rule, as kvpress ranks them first).
// Knobs: future (1..1048576, default 512), covariance (boolean, default true), vnorm (boolean, default true),
// epsilon (≥ 0, default 0: added to the attention before the ‖v‖ factor, as kvpress's leaderboard sets 1e-2).
//
// In the refresh loop μ and Σ cover every query fed so far (merged chunk by chunk, Chan et al.), and R̄
// the `future` positions after the newest token.
#include <cmath>

#include "policies/layer_scores.h"
#include "policies/policy.h"

namespace kvbench {

namespace {
// Mean and summed outer products of deviations of one layer's queries, per sequence and query head.
struct QueryMoments {
  int64_t count = 0;
  at::Tensor mean;  // [B, H, D]
  at::Tensor m2;    // [B, H, D, D]

  void add(const at::Tensor& queries) {  // [B, H, T, D] float32
    const int64_t n = queries.size(2);
    const at::Tensor mean_b = queries.mean(2, true);
    const at::Tensor centered = queries - mean_b;
    const at::Tensor m2_b = at::einsum("bnsi,bnsj->bnij", {centered, centered});
    if (count == 0) {
      count = n, mean = mean_b.squeeze(2), m2 = m2_b;
      return;
    }
    const double total = static_cast<double>(count + n);
    const at::Tensor delta = mean_b.squeeze(2) - mean;
    m2 = m2 + m2_b + delta.unsqueeze(-1) * delta.unsqueeze(-2) * (static_cast<double>(count) * n / total);
    mean = mean + delta * (n / total);
    count += n;
  }
  void expand_batch(int64_t batch) {
    if (count == 0) return;
    mean = mean.expand({batch, mean.size(1), mean.size(2)}).contiguous();
    m2 = m2.expand({batch, m2.size(1), m2.size(2), m2.size(3)}).contiguous();
  }
};

class ExpectedAttentionPolicy final : public Policy {
 public:
  ExpectedAttentionPolicy(int64_t future, bool covariance, bool vnorm, double epsilon)
      : future_(future), covariance_(covariance), vnorm_(vnorm), epsilon_(epsilon) {}
  std::string name() const override { return "expected-attention"; }
  std::string summary() const override {
    return "per KV head: the attention expected of future queries (mean and covariance of the queries so far, "
           "RoPE averaged over the next `future` positions), times ‖v‖; `--sinks` stay (kvpress "
           "ExpectedAttentionPress)";
  }
  PolicyNeeds needs() const override {
    PolicyNeeds needs;
    needs.step_queries = true;
    return needs;
  }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, budget.recent, Granularity::PerKvHead, budget.sinks};
  }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  void prepare(const Preparation& preparation) override {
    sinks_ = preparation.budget.sinks;
  }
  void observe(const ForwardResult& step, const KvCache&) override {
    const int64_t T = step.queries.front().size(2), skip = std::clamp<int64_t>(sinks_ - fed_, 0, T);
    moments_.resize(step.queries.size());
    if (skip < T)
      for (size_t l = 0; l < step.queries.size(); ++l)
        moments_[l].add(step.queries[l].narrow(2, skip, T - skip).to(at::kFloat));
    fed_ += T;
  }
  at::Tensor score(const ScoringContext& context) override {
    const KvCache& cache = context.cache;
    const at::Tensor rotation = mean_rotation(context.model, cache.keys(0).device());  // [D, D]
    return score_each_layer(cache, [&](int64_t l, const at::Tensor& positions) {
      // No query past the sinks yet (J below the sinks): nothing to expect, every candidate scores 0.
      if (static_cast<size_t>(l) >= moments_.size() || moments_[l].count == 0)
        return at::zeros(positions.sizes(), positions.options().dtype(at::kFloat));
      const QueryMoments& m = moments_[l];
      const at::Tensor keys = cache.keys(l).to(at::kFloat);  // [B, KV, N, D]
      const int64_t B = keys.size(0), KV = keys.size(1), N = keys.size(2), D = keys.size(3);
      const int64_t group = m.mean.size(1) / KV;
      const at::Tensor keys_t = keys.repeat_interleave(group, 1).transpose(2, 3);  // [B, H, D, N]
      const at::Tensor mean = at::matmul(m.mean, rotation.t());                  // [B, H, D]
      at::Tensor logits = at::matmul(mean.unsqueeze(2), keys_t).squeeze(2) / std::sqrt(static_cast<double>(D));
      if (covariance_) {
        const at::Tensor cov = at::matmul(rotation, at::matmul(m.m2 / static_cast<double>(m.count), rotation.t()));
        logits = logits + at::einsum("bhin,bhij,bhjn->bhn", {keys_t, cov, keys_t}) / D / 2;
      }
      const at::Tensor candidate = positions.ge(sinks_);  // [B, KV, N]; padding and sinks are not ranked
      const at::Tensor masked = logits.masked_fill(candidate.repeat_interleave(group, 1).logical_not(), -INFINITY);
      at::Tensor scores = at::softmax(masked, -1).view({B, KV, group, N}).mean(2);
      if (vnorm_) scores = (scores + epsilon_) * cache.values(l).to(at::kFloat).norm(2, {-1});
      return scores.masked_fill(candidate.logical_not(), 0.0);
    });
  }
  void expand_batch(int64_t batch) override {
    for (QueryMoments& m : moments_) m.expand_batch(batch);
  }
  void reset() override {
    moments_.clear();
    fed_ = 0;
  }

 private:
  // RoPE's rotation averaged over the `future` positions after the newest token: [D, D].
  at::Tensor mean_rotation(const Model& model, at::Device device) const {
    const at::Tensor positions = at::arange(fed_, fed_ + future_, at::kLong).unsqueeze(0).to(device);
    const Rotary tables = model.rotary(positions);  // cos, sin [1, F, D]
    const at::Tensor cos = tables.cos[0], sin = tables.sin[0];
    const int64_t D = cos.size(1), half = D / 2;
    const at::Tensor identity = at::eye(D, cos.options());
    at::Tensor rotate_half = at::zeros({D, D}, cos.options());  // R x = x·cos + rotate_half(x)·sin
    rotate_half.narrow(0, half, half).narrow(1, 0, half).copy_(at::eye(half, cos.options()));
    rotate_half.narrow(0, 0, half).narrow(1, half, half).copy_(-at::eye(half, cos.options()));
    return (cos.unsqueeze(-1) * identity + sin.unsqueeze(-1) * rotate_half).mean(0);
  }

  int64_t future_;
  bool covariance_, vnorm_;
  double epsilon_;
  int64_t sinks_ = 4;
  std::vector<QueryMoments> moments_;  // per layer
  int64_t fed_ = 0;                    // tokens fed so far
};
}  // namespace

std::unique_ptr<Policy> make_expected_attention_policy(const PolicyOptions& options) {
  return std::make_unique<ExpectedAttentionPolicy>(options.knobs.integer("future", 512, 1, 1 << 20),
                                                   options.knobs.boolean("covariance", true),
                                                   options.knobs.boolean("vnorm", true),
                                                   options.knobs.number("epsilon", 0.0, 0.0, 1e6));
}

}  // namespace kvbench
