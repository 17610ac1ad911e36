// SwiGLU's gate, silu(gate) · up, for the decoder's MLP.
#pragma once
#include <ATen/ATen.h>

namespace kvbench {

// gate, up [..., I] of one dtype. On the CPU in float32 with at most linear_detail::kSmallRows rows (decode
// steps), every element is computed alone with std::exp: ATen's vectorised exp and its scalar tail round
// differently, so which elements land in the tail — which depends on how many rows share the call —
// would change a row's result by an ulp, and batched samples would no longer decode exactly as alone.
// Elsewhere at::silu(gate) * up.
at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up);

}  // namespace kvbench
