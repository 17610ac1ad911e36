// The raw small-row product behind kvbench::linear (model/linear.h), shared by the portable kernel and
// the AVX2 one. Plain C types only: linear_avx2.cpp is compiled with -mavx2 and must not instantiate
// inline library code (std::, ATen) that the linker could then pick for callers on older CPUs.
#pragma once
#include <cstdint>

namespace kvbench::linear_detail {

enum class WeightType { f32, bf16, f16 };

// out[m, n] = dot(x[m, :], weight[n, :]) (+ bias[n]) for m < rows, n in [n_begin, n_end).
// Every element is computed by the same arithmetic, whatever rows, n range or tile it falls in:
// eight float32 lanes accumulate (by FMA) x[k] * w[k] in increasing k over the first K - K % B columns,
// lane_of(k) taking column k; lanes summed as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)); the K % B tail
// columns added in order by FMA; then the bias. So one output row is bitwise the same for any M.
// float32: B = 8, lane_of(k) = k mod 8. float16: B = 16, lane_of(k) = k mod 8. bfloat16: B = 16,
// lane_of(k) = (k mod 16) / 2 (a register of 16 bfloat16 widens as 8 pairs; model/linear_avx2.cpp).
struct SmallRowsProblem {
  const float* x = nullptr;  // [rows, K], contiguous
  // bfloat16 weights, AVX2 kernel: x with each full block of 16 columns reordered to its 8 even columns,
  // then its 8 odd ones (the tail in order), the order a block's widened pairs come in; made once per
  // product (pair_bf16_blocks) instead of by shuffles in every register tile.
  const float* x_pairs = nullptr;
  const void* weight = nullptr;  // [N, K], contiguous, of type `type`
  WeightType type = WeightType::f32;
  const float* bias = nullptr;  // [N] or null
  float* out = nullptr;         // [rows, N], contiguous
  int64_t rows = 0, K = 0, N = 0;
};

// Multiply-adds below which a product is not worth splitting over threads (~1 MiB of float32 weights
// for one row: tens of microseconds, against several to wake a pool).
constexpr int64_t kParallelWork = int64_t{1} << 18;

constexpr int64_t block_columns(WeightType type) { return type == WeightType::f32 ? 8 : 16; }
constexpr int64_t lane_of(WeightType type, int64_t k) { return type == WeightType::bf16 ? k % 16 / 2 : k % 8; }

// float16 → float32, n values (exact). widen_f16 takes the F16C path when the CPU has it: c10::Half's
// portable conversion costs a dozen instructions a value, which made the decode kernel's reads of a
// float16 KV cache a fifth of a decode step.
void widen_f16(const uint16_t* in, float* out, int64_t n);
void widen_f16_avx2(const uint16_t* in, float* out, int64_t n);  // needs F16C

// bfloat16 → float32, n values (exact: the upper half of a float32); float32 → bfloat16 rounded to
// nearest (ties to even), as .to() rounds.
void widen_bf16(const uint16_t* in, float* out, int64_t n);
void widen_bf16_avx2(const uint16_t* in, float* out, int64_t n);  // needs AVX2
void narrow_bf16(const float* in, uint16_t* out, int64_t n);

// float32 → float16, n values, rounded to nearest (ties to even) as c10::Half rounds; F16C when the CPU
// has it (c10::Half's portable conversion took 2 % of a float16 decode step, rounding its products).
void narrow_f16(const float* in, uint16_t* out, int64_t n);
void narrow_f16_avx2(const float* in, uint16_t* out, int64_t n);  // needs F16C

// x [rows, K] → out [rows, K] in SmallRowsProblem::x_pairs's order.
void pair_bf16_blocks(const float* x, float* out, int64_t rows, int64_t K);

// Whether this CPU runs the *_avx2 kernels (AVX2, FMA and F16C; always false where they are not built).
bool cpu_has_avx2_kernel();

void small_rows_scalar(const SmallRowsProblem& p, int64_t n_begin, int64_t n_end);
void small_rows_avx2(const SmallRowsProblem& p, int64_t n_begin, int64_t n_end);  // needs AVX2, FMA, F16C

}  // namespace kvbench::linear_detail
