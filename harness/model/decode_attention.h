// Decode attention on the CPU: one new token per sequence attends over its own cached keys/values, for
// many sequences with caches of different lengths in one call (batched samples). Each (sequence, head)
// is computed by the same code in the same order whatever else shares the call, so a sequence's result
// is bitwise the one it gets alone — and one call replaces ~10 ATen ops per sequence per layer.
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace kvbench {

struct DecodeAttentionGroup {
  at::Tensor keys, values;  // [R, KV, N, D] float32, bfloat16 or float16, contiguous along D (a cache view)
  at::Tensor probs;         // if defined: [R, H, 1, N] float32, receives the attention probabilities
  at::Tensor held;          // if defined: [R, KV, N] bool, false for padding slots (ragged caches): never attended
};

// True when decode_attention serves these tensors (CPU; float32, bfloat16, float16); otherwise use
// Model::attend per group.
bool decode_attention_supported(const at::Tensor& q);

// q [M, H, D] in the keys' dtype, the groups' rows in order (group g owns the next R_g rows); returns
// the attended values [M, H * D] in q's dtype, computed in float32. GQA: query head h reads KV head h / (H / KV).
at::Tensor decode_attention(const at::Tensor& q, const std::vector<DecodeAttentionGroup>& groups);

}  // namespace kvbench
