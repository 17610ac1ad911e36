// SwiGLU's gate, silu(gate) · up, for the decoder's MLP.
#pragma once
#include <ATen/ATen.h>

namespace kvbench {

// gate, up [..., I] of one dtype. On the CPU in float32 (no autograd) every element is computed alone
// with std::exp, at any row count: ATen's vectorised exp and its scalar tail round differently, so which
// elements land in the tail — which depends on how many rows share the call and on how the pool splits
// it — would change a row's result by an ulp, and rows packed together (batched decode steps, the
// counter-causal pass of several samples) would no longer compute exactly as alone. Elsewhere
// at::silu(gate) · up.
at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up);

}  // namespace kvbench
