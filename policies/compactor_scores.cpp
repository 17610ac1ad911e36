#include "policies/compactor_scores.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "common/error.h"
#include "policies/fed_queries.h"
#include "policies/layer_scores.h"

namespace kvbench {

namespace {
// The Cholesky factor of G, adding jitter·I (1e-2, then ten times more) until it succeeds, as kvpress's
// chol_with_jitter.
at::Tensor cholesky_with_jitter(const at::Tensor& G) {
  const at::Tensor identity = at::eye(G.size(-1), G.options());
  double jitter = 1e-2;
  for (int attempt = 0; attempt < 5; ++attempt, jitter *= 10) {
    const auto [factor, info] = at::linalg_cholesky_ex(G + jitter * identity, /*upper=*/false, /*check_errors=*/false);
    if (info.eq(0).all().item<bool>()) return factor;
  }
  fail("leverage scores: the sketched keys' Gram matrix has no Cholesky factor, even with jitter 100");
}

// kvpress's non_causal_chunked_attn, padding included: the last tile's padded queries attend (uniformly) and its
// padded keys are masked with −1e-9, not −∞, so both count as kvpress counts them.
at::Tensor tiled_attention_received(const at::Tensor& q, const at::Tensor& k, int64_t chunk) {  // [B, H, S, D]
  const int64_t B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
  const int64_t padded = (S + chunk - 1) / chunk * chunk, tiles = padded / chunk;
  const at::Tensor last_tile = at::arange(padded - chunk, padded, q.options().dtype(at::kLong)).ge(S);  // [chunk]
  auto tiled = [&](const at::Tensor& x) { return at::constant_pad_nd(x, {0, 0, 0, padded - S}).view({B, H, tiles, chunk, D}); };
  at::Tensor dots = at::matmul(tiled(q), tiled(k).transpose(-2, -1));  // [B, H, tiles, chunk, chunk]
  at::Tensor last = dots.select(2, tiles - 1);
  last.masked_fill_(last_tile.view({chunk, 1}), 0.0);
  last.masked_fill_(last_tile.view({1, chunk}), -1e-9);
  return dots.to(at::kFloat).softmax(-1).sum(-2).reshape({B, H, padded}).narrow(2, 0, S);
}
}  // namespace

at::Tensor leverage_scores(const at::Tensor& prerope_keys, int64_t sketch, at::Generator& generator) {
  const int64_t B = prerope_keys.size(0), KV = prerope_keys.size(1), D = prerope_keys.size(3);
  // Drawn on the host, in the keys' dtype, as torch.randn draws it: the same sketch on every device.
  const at::Tensor phi = at::randn({B, KV, D, sketch}, generator, at::TensorOptions().dtype(prerope_keys.scalar_type()))
                             .to(prerope_keys.device()) *
                         (1 / std::sqrt(static_cast<double>(sketch)));
  const at::Tensor X = at::matmul(prerope_keys - prerope_keys.mean(-2, true), phi).to(at::kFloat);  // [B, KV, n, k]
  const at::Tensor Xt = X.transpose(-2, -1);
  const at::Tensor G = at::matmul(Xt, X);
  const at::Tensor factor = cholesky_with_jitter(0.5 * (G + G.transpose(-2, -1)));
  const at::Tensor solved = at::cholesky_solve(Xt, factor, /*upper=*/false);  // G⁻¹Xᵀ
  return z_scores((X * solved.transpose(-2, -1)).sum(-1).clamp_min(0));
}

at::Tensor non_causal_attention_scores(const at::Tensor& queries, const at::Tensor& keys, const at::Tensor& values,
                                       int64_t chunk) {
  const int64_t B = queries.size(0), KV = queries.size(1), n = queries.size(2), group = queries.size(3);
  const at::Tensor q = queries.permute({0, 1, 3, 2, 4}).reshape({B, KV * group, n, queries.size(4)});
  const at::Tensor received = tiled_attention_received(q, keys.repeat_interleave(group, 1), chunk);
  const at::Tensor per_kv = received.view({B, KV, group, n}).mean(2);
  const at::Tensor weighted = per_kv * at::linalg_vector_norm(values, 2, {-1}, false, at::kFloat);
  return z_scores(at::avg_pool1d(weighted, {3}, {1}, {1}));
}

namespace {
class CompactorPolicy final : public Policy {
 public:
  explicit CompactorPolicy(CompactorRule rule)
      : rule_(std::move(rule)), generator_(at::make_generator<at::CPUGeneratorImpl>(rule_.seed)) {}
  std::string name() const override { return rule_.name; }
  std::string summary() const override { return rule_.summary; }
  PolicyNeeds needs() const override {
    PolicyNeeds needs;
    needs.step_queries = rule_.attention;
    return needs;
  }
  KeepRule keep_rule(const CacheBudget& budget) const override { return {false, budget.recent, Granularity::PerKvHead}; }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  void observe(const ForwardResult& step, const KvCache&) override {
    if (rule_.attention) queries_.observe(step);
  }
  void expand_batch(int64_t batch) override { queries_.expand_batch(batch); }
  void reset() override {
    queries_.reset();
    generator_.set_current_seed(rule_.seed);
  }

  at::Tensor score(const ScoringContext& context) override {
    const KvCache& cache = context.cache;
    const double blending = rule_.blending >= 0 ? rule_.blending : evicted_share(context);
    return score_each_layer(cache, [&](int64_t l, const at::Tensor& positions) {
      const at::Tensor queries = rule_.attention ? queries_.held(context.model, l, positions) : at::Tensor();
      std::vector<at::Tensor> rows = {cache.keys(l), cache.values(l), positions};
      if (queries.defined()) rows.push_back(queries);
      return score_held_sequences(positions, rows, [&](const std::vector<at::Tensor>& row) {
        return blended(context.model, row, blending);
      });
    });
  }

 private:
  // Scores of one layer's rows: keys, values, positions and (for attention) queries, each [B, KV, n, ...]; the
  // first and last protected entries score the maximum of the rest.
  at::Tensor blended(const Model& model, const std::vector<at::Tensor>& rows, double blending) {
    const int64_t n = rows[0].size(2);
    const int64_t first = std::min(rule_.protect_first, n), last = std::min(rule_.protect_last, n - first);
    const int64_t middle = n - first - last;
    if (middle == 0) return at::ones({rows[0].size(0), rows[0].size(1), n}, rows[0].options().dtype(at::kFloat));
    auto inner = [&](size_t i) { return rows[i].narrow(2, first, middle); };
    at::Tensor scores;
    if (rule_.leverage) {
      const at::Tensor prerope = rope_per_head(model, inner(0), -inner(2));
      scores = blending * leverage_scores(prerope, rule_.sketch, generator_);
    }
    if (rule_.attention) {
      const at::Tensor attention = non_causal_attention_scores(inner(3), inner(0), inner(1), rule_.chunk);
      scores = scores.defined() ? scores + attention : attention;
    }
    return at::constant_pad_nd(scores, {first, last}, scores.max().item<double>());
  }

  // kvpress blends by the compression ratio: the ratio budget's, else the share of entries this refresh evicts.
  static double evicted_share(const ScoringContext& context) {
    if (context.budget.ratio > 0) return context.budget.ratio;
    const double held = static_cast<double>(context.cache.size());
    return std::max(0.0, 1 - static_cast<double>(context.budget.J) / held);
  }

  CompactorRule rule_;
  at::Generator generator_;
  FedQueries queries_;
};
}  // namespace

std::unique_ptr<Policy> compactor_policy(CompactorRule rule) { return std::make_unique<CompactorPolicy>(std::move(rule)); }

}  // namespace kvbench
