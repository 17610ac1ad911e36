#include "model/swiglu.h"

#include <ATen/Parallel.h>

#include <cmath>

#include "model/linear.h"

namespace kvbench {

at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up) {
  if (gate.is_cpu() && gate.scalar_type() == at::kHalf)  // libtorch 1.13 has no CPU float16 silu
    return swiglu(gate.to(at::kFloat), up.to(at::kFloat)).to(at::kHalf);
  const int64_t width = gate.size(-1), rows = width ? gate.numel() / width : 0;
  if (!gate.is_cpu() || gate.scalar_type() != at::kFloat || up.scalar_type() != at::kFloat ||
      rows > linear_detail::kSmallRows || gate.requires_grad() || up.requires_grad())
    return at::silu(gate) * up;
  const at::Tensor g = gate.contiguous(), u = up.contiguous();
  at::Tensor out = at::empty_like(g);
  const float *gp = g.data_ptr<float>(), *up_ = u.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, g.numel(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) op[i] = gp[i] / (1.0f + std::exp(-gp[i])) * up_[i];
  });
  return out;
}

}  // namespace kvbench
