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

// Counter-causal entries with no future (the newest min_gap + 1) always stay.
KeepRule counter_causal_keep_rule(const CacheBudget& budget);

}  // namespace kvbench
