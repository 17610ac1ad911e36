#include "model/swiglu.h"

#include <ATen/Parallel.h>

#include <cmath>

namespace kvbench {

at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up) {
  if (gate.is_cpu() && gate.scalar_type() == at::kHalf)  // libtorch 1.13 has no CPU float16 silu
    return swiglu(gate.to(at::kFloat), up.to(at::kFloat)).to(at::kHalf);
  if (!gate.is_cpu() || gate.scalar_type() != at::kFloat || up.scalar_type() != at::kFloat || gate.requires_grad() ||
      up.requires_grad())
    return at::silu(gate) * up;
  // The loop runs straight through storage when both share one dense layout (a transposed BLAS output
  // stays as it is); every element is computed alone, so its order does not matter.
  const bool same_layout = gate.is_non_overlapping_and_dense() && gate.sizes() == up.sizes() &&
                           gate.strides() == up.strides();
  const at::Tensor g = same_layout ? gate : gate.contiguous(), u = same_layout ? up : up.contiguous();
  at::Tensor out = at::empty_like(g);  // the same strides as g
  const float *gp = g.data_ptr<float>(), *up_ = u.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, g.numel(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) op[i] = gp[i] / (1.0f + std::exp(-gp[i])) * up_[i];
  });
  return out;
}

}  // namespace kvbench
