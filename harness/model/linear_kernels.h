// The raw small-row product behind kvbench::linear (model/linear.h), shared by the portable kernel and
// the AVX2 one. Plain C types only: linear_avx2.cpp is compiled with -mavx2 and must not instantiate
// inline library code (std::, ATen) that the linker could then pick for callers on older CPUs.
#pragma once
#include <cstdint>

namespace kvbench::linear_detail {

enum class WeightType { f32, bf16, f16 };

// out[m, n] = dot(x[m, :], weight[n, :]) (+ bias[n]) for m < rows, n in [n_begin, n_end).
// Every element is computed by the same arithmetic, whatever rows, n range or tile it falls in:
// eight float32 lanes, lane l accumulating (by FMA) x[k] * w[k] for k ≡ l (mod 8) in increasing k over
// the first K - K % 8 columns; lanes summed as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)); the K % 8 tail
// columns added in order by FMA; then the bias. So one output row is bitwise the same for any M.
struct SmallRowsProblem {
  const float* x = nullptr;  // [rows, K], contiguous
  const void* weight = nullptr;  // [N, K], contiguous, of type `type`
  WeightType type = WeightType::f32;
  const float* bias = nullptr;  // [N] or null
  float* out = nullptr;         // [rows, N], contiguous
  int64_t rows = 0, K = 0, N = 0;
};

void small_rows_scalar(const SmallRowsProblem& p, int64_t n_begin, int64_t n_end);
void small_rows_avx2(const SmallRowsProblem& p, int64_t n_begin, int64_t n_end);  // needs AVX2, FMA, F16C

}  // namespace kvbench::linear_detail
