// The two scores that kvpress's CompactorPress blends (Chari & Van Durme 2025), each also a press of its own
// (LeverageScorePress, NonCausalAttnPress), and the policy that blends them: one class for the three, set by
// CompactorRule, so leverage.cpp, non_causal_attention.cpp and compactor.cpp each hold only their knobs.
// Every score is computed per layer over each KV head's entries as one sequence, as kvpress's prefill does.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "policies/policy.h"

namespace kvbench {

// Approximate statistical leverage of keys before RoPE [B, KV, n, D] (centred over the sequence, sketched on the
// right by a Gaussian [D, sketch] drawn from `generator`, through a Cholesky solve), z-normalised.
at::Tensor leverage_scores(const at::Tensor& prerope_keys, int64_t sketch, at::Generator& generator);

// Non-causal attention in tiles of `chunk` entries: each entry's attention received from the queries of its own
// tile (queries [B, KV, n, group, D] and keys after RoPE, no 1/√d scale, as kvpress), summed, averaged over the
// query group, times ‖v‖, smoothed over 3 neighbours, z-normalised.
at::Tensor non_causal_attention_scores(const at::Tensor& queries, const at::Tensor& keys, const at::Tensor& values,
                                       int64_t chunk);

struct CompactorRule {
  std::string name, summary;
  bool leverage = false, attention = false;  // the scores summed
  double blending = 1;  // the leverage's weight; < 0: the refresh's compression ratio (kvpress's blending=None)
  int64_t sketch = 48, chunk = 256;
  int64_t protect_first = 0, protect_last = 0;  // entries of each head scored above all others (compactor: 8, 4)
  uint64_t seed = 0;                            // of the sketches, drawn layer after layer at each refresh
};
std::unique_ptr<Policy> compactor_policy(CompactorRule rule);

}  // namespace kvbench
