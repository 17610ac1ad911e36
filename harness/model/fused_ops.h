// RMSNorm and RoPE's rotation, each one pass over a row instead of ATen's 5–7 elementwise ops and their
// temporaries. Decoding one token, those ops (two norms and two rotations per layer) cost more in
// dispatch than in arithmetic; fused, a float32 decode step spends its time reading weights.
//
// Both follow the arithmetic of Model's ATen formulas (HF's): the rotation exactly (every step is one
// correctly rounded float32 operation, in the same order: bitwise the same), the norm up to the order of
// its sum of squares (fixed per row, so a row's result does not depend on how many rows share the call).
// They serve CPU tensors that need no gradient; fused_ops_apply says when, and Model falls back otherwise.
#pragma once
#include <ATen/ATen.h>

namespace kvbench {

// True when x (of a floating dtype) and the other operand are CPU tensors that record no autograd.
bool fused_ops_apply(const at::Tensor& x, const at::Tensor& other);

// HF's RMSNorm over the last dim: weight · to_x_dtype(x · rsqrt(mean(x²) + eps)), computed in float32
// (float64 for float64 x). weight [D] of x's dtype, x [..., D]; undefined for a weight of another dtype
// (the caller then uses ATen, whose type promotion decides the result's dtype).
at::Tensor fused_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);

// x · cos + rotate_half(x) · sin in float32 (float64 x: float64), cast back to x's dtype. x [..., D];
// cos and sin float32, of x's shape or of x's shape with one dim of size 1 (broadcast, e.g. over heads).
// Undefined when the tables broadcast in any other way (the caller then uses ATen).
at::Tensor fused_rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

}  // namespace kvbench
