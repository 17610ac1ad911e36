// Where the AVX2 kernels are not built (CPUs other than x86-64; see CMakeLists.txt), their callers still
// name them: cpu_has_avx2_kernel() is false there, so none of these runs.
#include <cstdlib>

#include "model/decode_attention_kernels.h"
#include "model/linear_kernels.h"

namespace kvbench {

namespace linear_detail {

void widen_f16_avx2(const uint16_t*, float*, int64_t) { std::abort(); }
void widen_bf16_avx2(const uint16_t*, float*, int64_t) { std::abort(); }
void narrow_f16_avx2(const float*, uint16_t*, int64_t) { std::abort(); }
void small_rows_avx2(const SmallRowsProblem&, int64_t, int64_t) { std::abort(); }

}  // namespace linear_detail

namespace attention_detail {

void scores_avx2(const HeadRows&, float, float*, float*) { std::abort(); }
void values_avx2(const HeadRows&, const float*, float*, float*) { std::abort(); }
void softmax_avx2(float*, int64_t) { std::abort(); }

}  // namespace attention_detail

}  // namespace kvbench
