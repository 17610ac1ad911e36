// KVpop's training targets (arXiv 2607.05061; ../shared/DESIGN.md §1) from one full causal pass.
//
// For layer l, KV head h (query heads g of its group, G of them), sequence length S and protected
// window w, the future attention mass of token t is
//     m_t = 1/G Σ_g 1/|Q_t| Σ_{q ∈ Q_t} γ_h^⌊(q−t)/n⌋ · a_g(q, t),     Q_t = { q : t + w ≤ q < S },
// a_g(q, t) the causal softmax attention of query q on key t; the target is log(m_t + ε), and NaN
// where Q_t is empty (the last w tokens never leave the window). It is computed without an S×S
// matrix: the original queries' log-sum-exp first (blocks of queries), then a "transposed" pass in
// blocks of keys, each key block against every query, exp(score − lse) summed over future queries.
//
// Boundary pairs: while decoding, token e = p − w − 1 leaves the window at step p (tokens 0..p−1
// seen). The teacher keeps the top-k by target among the candidates [s, e] (s sinks excluded); its
// boundary token b is the k-th best of [s, e). Label 1 when e enters the teacher's top-k (m_e > m_b).
// The scorer is trained with a pairwise logistic loss softplus(−(2·label − 1)(f_e − f_b)/τ).
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace kvbench {

struct FutureMassSpec {
  int64_t window = 32;          // w
  std::vector<double> gamma;    // γ_h per KV head; empty = no decay, one value = every head
  int64_t decay_period = 64;    // n
  double epsilon = 1e-6;        // ε
  int64_t block = 256;          // queries / keys per block (memory O(block · S), never S × S)
};

// Log-sum-exp over keys t ≤ q of each query's attention logits: q [B, H, S, D], k [B, KV, S, D] → [B, H, S].
at::Tensor causal_logsumexp(const at::Tensor& q, const at::Tensor& k, int64_t block);

// Targets log(m_t + ε) of one layer: [B, KV, S] (NaN where no query lies beyond the window).
at::Tensor future_mass_targets(const at::Tensor& q, const at::Tensor& k, const FutureMassSpec& spec);

// Pairs of one KV head's targets [S]: the token leaving the window, the teacher's boundary token, the label.
struct BoundaryPairs {
  std::vector<int64_t> leaving, boundary;
  std::vector<float> label;  // 1: the leaving token enters the teacher's top-k
};
BoundaryPairs boundary_pairs(const at::Tensor& targets, int64_t sinks, int64_t window, int64_t k);

// Mean pairwise logistic loss of scores [..., S] (one row per head) over index tensors of the same leading shape.
at::Tensor pairwise_logistic_loss(const at::Tensor& score_leaving, const at::Tensor& score_boundary,
                                  const at::Tensor& label, double temperature);

}  // namespace kvbench
