// Next-token choice: greedy, or temperature / top-k / top-p sampling from a per-rollout seeded RNG.
// Sampling runs on the CPU in float64 with our own RNG, so a seed gives the same tokens on any device.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <random>

namespace kvbench {

struct SamplingParams {
  double temperature = 0.0;  // 0 = greedy
  double top_p = 1.0;
  int64_t top_k = 0;         // 0 = off
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params, uint64_t rollout = 0);
  int64_t next(const at::Tensor& logits);  // logits [V]

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

}  // namespace kvbench
