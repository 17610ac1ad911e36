// Next-token choice: greedy, or temperature / top-k / top-p sampling from per-rollout seeded RNGs.
// Sampling runs on the CPU in float64 with our own RNG, so a seed gives the same tokens on any device.
// A step's rollouts are sampled together; from a GPU only the entries that can carry probability (and
// whole rows holding NaN or an infinite top) reach the host.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <random>
#include <vector>

namespace kvbench {

struct SamplingParams {
  double temperature = 0.0;  // 0 = greedy
  double top_p = 1.0;        // 0..1
  int64_t top_k = 0;         // 0 = off
  uint64_t seed = 0;
};

class Sampler {
 public:
  // Rollout b draws from its own RNG, seeded by (seed, b): its tokens do not depend on the other rollouts.
  Sampler(const SamplingParams& params, int64_t rollouts);

  // How the logits reach the host: all of them (CPU logits: nothing to copy), or each row's candidates,
  // selected where the logits are (the default for a GPU; tests run it on the CPU).
  enum class Transfer { All, Candidates };

  // The next token of each rollout in `rows`, from the logits of every rollout [B, V] on any device;
  // the other rollouts' RNGs are left as they are.
  std::vector<int64_t> next(const at::Tensor& logits, const std::vector<int64_t>& rows);
  std::vector<int64_t> next(const at::Tensor& logits, const std::vector<int64_t>& rows, Transfer transfer);

 private:
  int64_t draw(std::mt19937_64& rng, const double* x, const int32_t* ids, int64_t n) const;

  SamplingParams params_;
  std::vector<std::mt19937_64> rngs_;
};

}  // namespace kvbench
