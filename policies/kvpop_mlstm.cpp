#include "policies/kvpop_mlstm.h"

#include <cmath>
#include <limits>

namespace kvbench::mlstm {

namespace {
// [KV, ...] → broadcastable over [B, KV, T, ...].
at::Tensor over_tokens(const at::Tensor& t) { return t.unsqueeze(0).unsqueeze(2); }
}  // namespace

Projection project(const Weights& w, const at::Tensor& x) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(w.wk.size(1)));
  Projection p;
  p.q = at::einsum("bktf,kmf->bktm", {x, w.wq});
  p.k = at::einsum("bktf,kmf->bktm", {x, w.wk}) * scale;
  p.v = at::einsum("bktf,kmf->bktm", {x, w.wv});
  p.log_i = (x * over_tokens(w.wi)).sum(-1) + w.bi.view({1, -1, 1});
  p.log_f = at::log_sigmoid((x * over_tokens(w.wf)).sum(-1) + w.bf.view({1, -1, 1}));
  return p;
}

at::Tensor readout(const Weights& w, const at::Tensor& h) {
  const at::Tensor normed = at::layer_norm(h, {h.size(-1)});
  return (at::silu(normed) * over_tokens(w.a)).sum(-1) + w.b.view({1, -1, 1});
}

at::Tensor delayed_scores(const Weights& w, const at::Tensor& x, int64_t delay) {
  const Projection p = project(w, x);
  const int64_t S = x.size(2);
  const auto opts = at::TensorOptions().dtype(at::kLong).device(x.device());
  const at::Tensor read_at = at::clamp_max(at::arange(S, opts) + delay, S - 1);  // q(u)
  const at::Tensor F = p.log_f.cumsum(-1);                                       // Σ_{l≤t} log f_l
  // log decay from token j's write to the read at q(u): F_q − F_j + log i_j, for j ≤ q(u) only.
  const at::Tensor Fq = F.index_select(-1, read_at).unsqueeze(-1);              // [B, KV, S, 1]
  at::Tensor D = Fq - F.unsqueeze(-2) + p.log_i.unsqueeze(-2);                  // [B, KV, S(u), S(j)]
  const at::Tensor future = at::arange(S, opts).view({1, S}) > read_at.view({S, 1});
  D = D.masked_fill(future, -std::numeric_limits<float>::infinity());
  const at::Tensor m = std::get<0>(D.max(-1, true)).detach();  // h does not depend on it (see the header)
  const at::Tensor W = at::exp(D - m) * at::einsum("bkum,bkjm->bkuj", {p.q, p.k});
  const at::Tensor den = at::maximum(W.sum(-1, true).abs(), at::exp(-m));
  return readout(w, at::matmul(W, p.v) / den);
}

State::State(int64_t batch, int64_t kv_heads, int64_t memory, at::TensorOptions options)
    : C_(at::zeros({batch, kv_heads, memory, memory}, options)),
      z_(at::zeros({batch, kv_heads, memory}, options)),
      m_(at::full({batch, kv_heads}, -std::numeric_limits<float>::infinity(), options)) {}

void State::absorb(const Projection& p, int64_t t) {
  const at::Tensor log_i = p.log_i.select(2, t), log_f = p.log_f.select(2, t);  // [B, KV]
  const at::Tensor m = at::maximum(log_f + m_, log_i);
  // First token: m_ = −∞ gives f' = e^{−∞} = 0 (nothing to forget).
  const at::Tensor f = at::exp(log_f + m_ - m).unsqueeze(-1), i = at::exp(log_i - m).unsqueeze(-1);
  const at::Tensor k = p.k.select(2, t), v = p.v.select(2, t);                    // [B, KV, M]
  C_ = f.unsqueeze(-1) * C_ + i.unsqueeze(-1) * k.unsqueeze(-1) * v.unsqueeze(-2);
  z_ = f * z_ + i * k;
  m_ = m;
}

at::Tensor State::read(const at::Tensor& q) const {
  const at::Tensor num = at::einsum("bkm,bkmn->bkn", {q, C_});
  const at::Tensor den = at::maximum((q * z_).sum(-1, true).abs(), at::exp(-m_).unsqueeze(-1));
  return num / den;
}

void State::expand_batch(int64_t batch) {
  C_ = C_.expand({batch, -1, -1, -1}).contiguous();
  z_ = z_.expand({batch, -1, -1}).contiguous();
  m_ = m_.expand({batch, -1}).contiguous();
}

}  // namespace kvbench::mlstm
