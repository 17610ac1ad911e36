// The counter-causal pass shared by `counter-causal` and `counter-causal-fast`: fresh queries of the
// cached tokens (RoPE at their original positions) attend to the *cached* keys/values of later
// entries only (slot j > i + min_gap). Query rows are processed in blocks, so scoring n entries never
// holds an n×n score matrix per head (users run n = 16K–128K).
#pragma once
#include "policies/policy.h"

namespace kvbench {

// One layer's anti-causal attention residual: x [B, n, hidden] → x + o_proj(attention).
at::Tensor anticausal_attention_residual(const Model& model, const KvCache& cache, int64_t layer, const at::Tensor& x,
                                         int64_t min_gap, int64_t block_rows = 1024);

// Score of entry i = the logit of its own token at the final hidden state x[i] (float32).
at::Tensor own_token_logits(const Model& model, const KvCache& cache, const at::Tensor& x);

// Floating-point operations of one anti-causal scoring pass over n entries through `layers` layers
// (the last ones), with or without each layer's MLP — the work it must do, a multiply-add counted as 2:
//   per layer   2·n·hidden·(H·D [q_proj] + H·D [o_proj] (+ 3·intermediate [gate, up, down] with MLP))
//             + 4·H·D·P  (q·k and p·v over the P allowed (query, key) pairs; P = m(m+1)/2, m = n − min_gap − 1)
//   once        2·n·hidden (each entry's own-token row of the LM head).
// Norms, RoPE, softmax, biases and residual adds are not counted; neither are k/v projections (the
// pass reuses the cached K/V) nor masked-out products.
double anticausal_pass_flops(const ModelConfig& config, int64_t n, int64_t min_gap, int64_t layers, bool with_mlp);

// Counter-causal entries with no future (the newest min_gap + 1) always stay.
KeepRule counter_causal_keep_rule(const CacheBudget& budget);

}  // namespace kvbench
