#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace kvbench {

Sampler::Sampler(const SamplingParams& params, uint64_t rollout)
    : params_(params), rng_(params.seed * 0x9E3779B97F4A7C15ull + rollout) {}

int64_t Sampler::next(const at::Tensor& logits) {
  if (params_.temperature <= 0.0) return logits.argmax().item<int64_t>();
  const at::Tensor scaled = logits.to(at::kCPU, at::kDouble).contiguous() / params_.temperature;
  const double* data = scaled.data_ptr<double>();
  const int64_t V = scaled.numel();
  std::vector<int64_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  const int64_t k = params_.top_k > 0 ? std::min(params_.top_k, V) : V;
  // NaN (an overflowed 16-bit forward) ranks last: std::partial_sort needs a strict weak order.
  auto value = [&](int64_t i) { return std::isnan(data[i]) ? -HUGE_VAL : data[i]; };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
    return value(a) > value(b) || (value(a) == value(b) && a < b);
  });
  order.resize(k);
  std::vector<double> probs(k);
  for (int64_t i = 0; i < k; ++i) probs[i] = std::exp(data[order[i]] - data[order[0]]);
  const double total = std::accumulate(probs.begin(), probs.end(), 0.0);
  // Nucleus: the smallest prefix of the sorted distribution whose mass reaches top_p (at least one token).
  double mass = 0.0;
  int64_t kept = 0;
  while (kept < k && (kept == 0 || mass < params_.top_p * total)) mass += probs[kept++];
  const double u = std::uniform_real_distribution<double>(0.0, mass)(rng_);
  double cumulative = 0.0;
  for (int64_t i = 0; i < kept; ++i) {
    cumulative += probs[i];
    if (u < cumulative) return order[i];
  }
  return order[kept - 1];
}

}  // namespace kvbench
