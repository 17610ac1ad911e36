// kvbench::linear: at::linear for inference, fast where libtorch 1.13 is slow on the CPU.
//
// libtorch's CPU at::linear runs a one-row product (a decode step) at a third of the memory bandwidth;
// its bfloat16 products range from 0.7 to 26 GB/s here depending on threads and oneDNN, and float16 has
// none. Here, on the CPU, inputs of at most kSmallRows rows go through our own kernel (AVX2+FMA+F16C when
// the CPU has them, else portable code): float32 accumulation for every weight dtype, parallel over
// output features only. Larger inputs go to BLAS, split over output features in libtorch's pool (16-bit
// weights upcast one block of rows at a time), except 16-bit products on a CPU with instructions for
// them: libtorch's 16-bit GEMM (linear_detail::hardware_gemm). CUDA, float64 and autograd use
// at::linear.
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace kvbench {

// x [..., K] (float32, or the weight's 16-bit dtype), weight [N, K] (float32, bfloat16, float16),
// bias [N] or undefined. Returns [..., N] in x's dtype: x · weightᵀ + bias, accumulated in float32.
// For at most kSmallRows rows, every output row is bitwise the same as computing that row alone,
// whatever the other rows, the row's position and the thread count (batched decoding relies on it).
// Call it qualified: with two arguments, unqualified `linear` also finds at::linear by ADL (ambiguous).
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

struct Affine {
  at::Tensor weight, bias;  // bias may be undefined
};

// Several products of one x, each bitwise what linear(x, weight, bias) returns, computed together: for at
// most kSmallRows rows on the CPU they share one pass of the thread pool, so a small product (a KV
// projection) is split over threads beside its neighbours and the pool waits for its slowest thread once,
// not once per product.
std::vector<at::Tensor> linear(const at::Tensor& x, const std::vector<Affine>& layers);

// residual + linear(x, layer): the decoder's residual connection, taken inside the product's pass where our
// kernel serves it (no ATen op, no temporary on a decode step). In 16-bit, rounded as the two ops round:
// the product to x's dtype, then the sum.
at::Tensor linear_residual(const at::Tensor& x, const Affine& layer, const at::Tensor& residual);

// SwiGLU's gated product, silu(linear(x, gate)) · linear(x, up) with silu(g) = g / (1 + exp(−g)): where our
// kernel serves it, one pass computes both products and combines them chunk by chunk, element by element
// with std::exp (ATen's vectorised exp and its scalar tail round differently, and which elements fall in
// the tail depends on how many rows share a call: batched decoding would no longer be exact). In 16-bit,
// each step is rounded to x's dtype as HF's ops round it: both products, silu(gate), the product.
at::Tensor linear_swiglu(const at::Tensor& x, const Affine& gate, const Affine& up);

// The rows of a packed matrix (several samples' rows, one after another) in consecutive segments, each of
// which must come out as if multiplied alone. Empty or one segment: the matrix is one operand.
using RowSegments = std::vector<int64_t>;

// The products above over x [M, K] of `segments` rows: segments of at most kSmallRows rows share one call of
// our kernel, whatever their total (each row is computed alone there); each larger segment takes BLAS on its
// own rows, as it would alone (BLAS's rows depend on the rows beside them). So each segment's result is
// bitwise the product of its rows alone, and a pass packs samples of any length (Model::forward(groups)).
std::vector<at::Tensor> linear(const at::Tensor& x, const std::vector<Affine>& layers, const RowSegments& segments);
at::Tensor linear_residual(const at::Tensor& x, const Affine& layer, const at::Tensor& residual,
                           const RowSegments& segments);
at::Tensor linear_swiglu(const at::Tensor& x, const Affine& gate, const Affine& up, const RowSegments& segments);

namespace linear_detail {

// Up to this many rows our kernel is at least as fast as OpenBLAS's sgemm: `kvbench bench linear` on a
// [4864, 896] float32 weight (2 Zen 5 cores): 47 vs 37 GFLOP/s at 16 rows, 46–50 vs 44–47 at 64, 46–53 vs
// 50–53 at 128. It also bounds the batch a batched decoder can run bit-reproducibly (one row = one rollout).
constexpr int64_t kSmallRows = 64;

enum class Kernel { best, portable };

enum class WeightType;  // model/linear_kernels.h
WeightType weight_type(at::ScalarType dtype);  // float32 for any dtype other than bfloat16 and float16
// float32 values [n] stored at `to` in `dtype` (float32, bfloat16 or float16), rounded as .to() rounds.
void store_as(at::ScalarType dtype, const float* from, void* to, int64_t n);

// What one pass makes of its products: each stored alone; one product added to a residual [..., N] (of
// the output dtype); or two (gate, up) combined by SwiGLU. See linear_residual and linear_swiglu.
enum class Combine { separate, residual, swiglu };

// Our kernel for x [..., K] (any number of rows M, float32 or 16-bit), the product linear() uses for
// M ≤ kSmallRows; results [..., N].
// `portable` forces the portable code (tests compare it with the SIMD path). The results are float32,
// or rounded to a 16-bit out_dtype (as .to(out_dtype) rounds them): one per product, or the one that
// `combine` makes of them.
at::Tensor small_rows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                      Kernel kernel = Kernel::best);

// True where the CPU multiplies `dtype` in hardware and libtorch reaches it (bfloat16: AVX512-BF16 or AMX;
// float16: AVX512-FP16 or AMX-FP16, libtorch ≥ 2.3): there a product of more than kSmallRows rows with x and
// weight both in `dtype` is libtorch's own 16-bit GEMM (oneDNN: float32 accumulation, one rounding at the
// end), 3–6× the float32 product of the upcast weight (bfloat16, Zen 4) — within the float32 accumulation
// bound, but not bitwise the product of x's values in float32. False for float32.
bool hardware_gemm(at::ScalarType dtype);
std::vector<at::Tensor> small_rows(const at::Tensor& x, const std::vector<Affine>& layers, Kernel kernel,
                                   at::ScalarType out_dtype, Combine combine, const at::Tensor& residual);

}  // namespace linear_detail

}  // namespace kvbench
