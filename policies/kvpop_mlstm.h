// KVpop's stateful scorer (arXiv 2607.05061): per (layer, KV head) an mLSTM-style matrix memory over the
// standardised features x_t = [k_t; v_t] of the tokens in arrival order, read with a *delayed* readout.
//
//   q̃_t = W_q x_t, k̃_t = W_k x_t / √M, ṽ_t = W_v x_t                      (M = memory width)
//   log i_t = w_i·x_t + b_i (exponential input gate), log f_t = log σ(w_f·x_t + b_f)
//   C_t = f_t C_{t−1} + i_t k̃_t ṽ_tᵀ,  z_t = f_t z_{t−1} + i_t k̃_t
//   token u is scored when token q = u + d arrives (d = the protected window w; 0 = at insertion):
//   h = C_qᵀ q̃_u / max(|z_q·q̃_u|, 1),  r̂_u = a·SiLU(LayerNorm(h)) + b
//
// Stabilisation as in mLSTM: the state is kept scaled by e^{−m_t}, m_t = max(log f_t + m_{t−1}, log i_t),
// and the lower bound 1 of the denominator becomes e^{−m_t} in that scale, so exponential input gates
// never overflow and h is unchanged. The parallel form (training, whole sequences: an S×S decay matrix)
// and the recurrent form (the kvpop policy, token by token) compute the same r̂; memory at q holds
// tokens ≤ q only, so nothing beyond q is ever read.
#pragma once
#include <ATen/ATen.h>

namespace kvbench::mlstm {

// One layer's parameters, every KV head: wq, wk, wv [KV, M, F]; wi, wf [KV, F]; bi, bf [KV]; a [KV, M]; b [KV].
struct Weights {
  at::Tensor wq, wk, wv, wi, bi, wf, bf, a, b;
};

struct Projection {
  at::Tensor q, k, v;      // [B, KV, T, M]
  at::Tensor log_i, log_f; // [B, KV, T]
};

// x: standardised features [B, KV, T, F].
Projection project(const Weights& w, const at::Tensor& x);

// h [B, KV, T, M] → r̂ [B, KV, T].
at::Tensor readout(const Weights& w, const at::Tensor& h);

// Parallel form: r̂ [B, KV, S] of every token of a sequence, token u read from the memory at
// min(u + delay, S − 1) (tokens still inside the window at the end are read from the latest memory).
at::Tensor delayed_scores(const Weights& w, const at::Tensor& x, int64_t delay);

// Recurrent form: the memory of one layer for a batch.
class State {
 public:
  State(int64_t batch, int64_t kv_heads, int64_t memory, at::TensorOptions options);
  // Absorbs token t of `p` (its T axis).
  void absorb(const Projection& p, int64_t t);
  // h [B, KV, M] for queries q̃ [B, KV, M] from the memory as it is now.
  at::Tensor read(const at::Tensor& q) const;
  void expand_batch(int64_t batch);

 private:
  at::Tensor C_, z_, m_;  // [B, KV, M, M], [B, KV, M], [B, KV]
};

}  // namespace kvbench::mlstm
