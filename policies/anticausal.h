// The counter-causal pass shared by `counter-causal` and `counter-causal-fast`: fresh queries of the
// cached tokens (RoPE at their original positions) attend to the *cached* keys/values of later
// entries only (slot j > i + min_gap). Since every layer's keys/values come from the cache, the entries
// are independent of one another: the pass runs a block of entries at a time through all its layers,
// and attends a smaller block of query rows at a time, so scoring n entries never holds an n×n score
// matrix per head (users run n = 16K–128K) and the working set stays in cache.
#pragma once
#include "policies/policy.h"

namespace kvbench {

// One layer's anti-causal attention residual of the entries first_row … first_row + x.size(1) − 1:
// x [B, rows, hidden] → x + o_proj(attention). Query rows are attended `block_rows` at a time (0: as
// many as keep one block's scores within a cache-sized budget, at least 32).
at::Tensor anticausal_attention_residual(const Model& model, const KvCache& cache, int64_t layer, const at::Tensor& x,
                                         int64_t min_gap, int64_t first_row = 0, int64_t block_rows = 0);

// Scores [B, n] (float32) of the pass from `input` [B, n, hidden], the input of layer `first_layer`,
// through the last layer (each with its MLP when `with_mlp`), `pass_rows` entries at a time. 512 rows
// keep the weight products at full speed while a block's activations (rows × intermediate floats) stay
// small enough for malloc to reuse, instead of mapping fresh pages that fault in on every layer.
at::Tensor anticausal_scores(const Model& model, const KvCache& cache, const at::Tensor& input, int64_t first_layer,
                             bool with_mlp, int64_t min_gap, int64_t pass_rows = 512);

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
