// Attention through ATen's fused scaled_dot_product_attention (PyTorch ≥ 2.5: flash / memory-efficient
// kernels on CUDA), for the calls that need no probabilities: prefill chunks and the counter-causal pass.
// Model::attend routes CUDA tensors here; on the CPU kvbench's own kernels stay (block_attention.h: row
// blocks independent of the batch, which batched = sequential relies on), unless a test asks for SDPA
// to compare the two (tests/core/test_sdpa_attention.cpp: within 2e-6 in float32).
#pragma once
#include <ATen/ATen.h>
#include <torch/version.h>

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
#define KVBENCH_HAS_SDPA 1
#else
#define KVBENCH_HAS_SDPA 0  // libtorch 1.13 (Debian): no fused attention; enable_gqa came in 2.5
#endif

namespace kvbench {

// Model::attend's contract (model/block_attention.h): q [B, H, T, D] over k, v [B, KV, N, D]; `allowed` a
// bool mask [T, N], [1 or B, T, N] or per KV head [B, KV, T, N], or undefined; rows with no visible key
// yield 0; returns [B, T, H * D] in q's dtype. Throws where KVBENCH_HAS_SDPA is 0.
at::Tensor sdpa_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed);

// Whether Model::attend hands these tensors to sdpa_attention: CUDA tensors where SDPA exists, or CPU ones
// too while sdpa_on_cpu is set (for tests that compare the two paths through a whole pass).
bool sdpa_serves(const at::Tensor& q);
void set_sdpa_on_cpu(bool on);

}  // namespace kvbench
