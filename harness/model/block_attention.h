// Attention of many query rows at once (a prefill chunk, a whole sequence) on the CPU: Model::attend's
// arithmetic, computed per (sequence, KV head, block of query rows) in libtorch's pool.
//
// One batched product per layer (Model::attend's path elsewhere) runs on one thread here (BLAS is
// single-threaded inside the pool, model/cpu_threads.h, and libtorch runs a batch of products one after
// another), writes all T × N scores to memory and reads them back three times (scale, mask, softmax), and
// multiplies every masked key too: at a 2048-token prompt that was ~180 ms a layer on 2 cores.
#pragma once
#include <ATen/ATen.h>

namespace kvbench {

// True when block_attention serves these tensors: CPU, and nothing to differentiate (training keeps the
// batched ATen products, which autograd follows).
bool block_attention_supported(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// q [B, H, T, D] over k, v [B, KV, N, D] (GQA: query head h reads KV head h / (H / KV)); `allowed` is a
// bool mask of T × N entries per sequence ([T, N], [1 or B, T, N]) or per KV head ([B, KV, T, N]; a
// ragged cache's padding), or undefined (every key visible). Rows with no visible key yield 0. Scores,
// softmax and probabilities in float32 (float64 for float64 tensors); returns [B, T, H * D] in v's dtype.
// Each block of query rows multiplies only the keys from the first to the last that any of its rows may
// see, so a causal prefill (or the counter-causal pass, its mirror) computes about half of the T × N
// products. Small blocks (a tiny model's, where ~10 ATen ops a block cost more than their arithmetic)
// attend row by row instead, each row over the keys it sees by decode attention's kernels
// (model/decode_attention_kernels.h). Block boundaries and the path depend on T, N, D and the
// head counts alone, so a sequence's result does not depend on the other sequences, the rollouts
// beside it or the thread count. probs_out, if given, receives the probabilities [B, H, T, N] (0 where
// a key is not visible).
at::Tensor block_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed,
                           at::Tensor* probs_out = nullptr);

}  // namespace kvbench
