#include "policies/kvpop_targets.h"

#include <cmath>
#include <limits>
#include <queue>

#include "common/error.h"

namespace kvbench {

namespace {

at::ScalarType compute_dtype(const at::Tensor& x) { return x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat; }

// Query heads grouped by their KV head: [B, H, S, D] → [B, KV, G, S, D] (head j belongs to KV head j / G).
at::Tensor grouped_queries(const at::Tensor& q, int64_t kv_heads) {
  return q.reshape({q.size(0), kv_heads, q.size(1) / kv_heads, q.size(2), q.size(3)}).to(compute_dtype(q));
}

// Attention logits of grouped queries [B, KV, G, Sq, D] against keys [B, KV, Sk, D]: [B, KV, G, Sq, Sk].
at::Tensor logits(const at::Tensor& queries, const at::Tensor& keys) {
  const at::Tensor k = keys.to(queries.scalar_type()).unsqueeze(2).transpose(-1, -2);
  return at::matmul(queries, k) / std::sqrt(static_cast<double>(queries.size(-1)));
}

at::Tensor decay_weights(const FutureMassSpec& spec, int64_t kv_heads, const at::Tensor& distance) {
  if (spec.gamma.empty()) return at::ones({kv_heads, 1, 1}, distance.options());
  if (spec.gamma.size() != 1 && static_cast<int64_t>(spec.gamma.size()) != kv_heads)
    fail("KVpop targets: {} decay values γ for {} KV heads", spec.gamma.size(), kv_heads);
  at::Tensor gamma = at::tensor(spec.gamma, distance.options()).view({-1, 1, 1}).expand({kv_heads, 1, 1});
  return gamma.pow(at::floor_divide(distance, spec.decay_period));
}

}  // namespace

at::Tensor causal_logsumexp(const at::Tensor& q, const at::Tensor& k, int64_t block) {
  const int64_t B = q.size(0), H = q.size(1), S = q.size(2), KV = k.size(1);
  const at::Tensor queries = grouped_queries(q, KV);
  const auto longs = at::TensorOptions().dtype(at::kLong).device(q.device());
  std::vector<at::Tensor> parts;
  for (int64_t q0 = 0; q0 < S; q0 += block) {
    const int64_t n = std::min(block, S - q0);
    at::Tensor scores = logits(queries.narrow(3, q0, n), k.narrow(2, 0, q0 + n));  // keys up to the block's last query
    const at::Tensor future = at::arange(q0 + n, longs).unsqueeze(0) > (at::arange(n, longs) + q0).unsqueeze(1);
    parts.push_back(at::logsumexp(scores.masked_fill(future, -std::numeric_limits<double>::infinity()), -1));
  }
  return at::cat(parts, -1).view({B, H, S});
}

at::Tensor future_mass_targets(const at::Tensor& q, const at::Tensor& k, const FutureMassSpec& spec) {
  if (spec.window < 0 || spec.decay_period <= 0 || spec.block <= 0 || spec.epsilon <= 0)
    fail("KVpop targets: window ≥ 0, decay period > 0, block > 0 and ε > 0 required");
  const int64_t B = q.size(0), S = q.size(2), KV = k.size(1);
  const at::Tensor queries = grouped_queries(q, KV);
  const at::Tensor lse = causal_logsumexp(q, k, spec.block).view({B, KV, -1, S}).to(queries.scalar_type());
  const auto values = queries.options();
  at::Tensor mass = at::zeros({B, KV, S}, values);
  for (int64_t t0 = 0; t0 < S; t0 += spec.block) {
    const int64_t n = std::min(spec.block, S - t0), q0 = std::min(t0 + spec.window, S);
    if (q0 == S) break;  // no query beyond the window for this block or any later one
    // The block's keys against the queries that may see them after the window: [B, KV, G, S − q0, n].
    const at::Tensor probs =
        (logits(queries.narrow(3, q0, S - q0), k.narrow(2, t0, n)) - lse.narrow(3, q0, S - q0).unsqueeze(-1)).exp();
    const at::Tensor distance = at::arange(q0, S, values).unsqueeze(1) - at::arange(t0, t0 + n, values).unsqueeze(0);
    const at::Tensor weight = decay_weights(spec, KV, distance.clamp_min(0)) * (distance >= spec.window);
    mass.narrow(2, t0, n).copy_((probs * weight.unsqueeze(1)).sum(3).mean(2));
  }
  const at::Tensor count = (S - spec.window - at::arange(S, values)).clamp_min(0);
  const at::Tensor targets = (mass / count.clamp_min(1) + spec.epsilon).log();
  return targets.masked_fill(count == 0, std::numeric_limits<double>::quiet_NaN());
}

BoundaryPairs boundary_pairs(const at::Tensor& targets, int64_t sinks, int64_t window, int64_t k) {
  if (k <= 0) fail("KVpop boundary pairs: k must be positive (got {})", k);
  const at::Tensor y = targets.to(at::kDouble).contiguous();
  const double* value = y.data_ptr<double>();
  const int64_t S = y.numel();
  // The teacher's current top-k of the candidates seen so far; top() is its weakest member (the
  // boundary): lowest target, and among equal targets the newest (ties keep the older token).
  const auto stronger = [&](int64_t a, int64_t b) { return value[a] != value[b] ? value[a] > value[b] : a < b; };
  std::priority_queue<int64_t, std::vector<int64_t>, decltype(stronger)> kept(stronger);
  BoundaryPairs pairs;
  for (int64_t e = sinks; e + window + 1 <= S; ++e) {  // e leaves the window at step p = e + w + 1 ≤ S
    if (static_cast<int64_t>(kept.size()) == k) {
      const int64_t b = kept.top();
      pairs.leaving.push_back(e);
      pairs.boundary.push_back(b);
      pairs.label.push_back(value[e] > value[b] ? 1.0f : 0.0f);
      if (value[e] > value[b]) kept.pop();
      else continue;
    }
    kept.push(e);
  }
  return pairs;
}

at::Tensor pairwise_logistic_loss(const at::Tensor& score_leaving, const at::Tensor& score_boundary,
                                  const at::Tensor& label, double temperature) {
  const at::Tensor sign = label * 2 - 1;
  return at::softplus(-sign * (score_leaving - score_boundary) / temperature).mean();
}

}  // namespace kvbench
