#include "model/fused_ops.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <cmath>
#include <optional>

namespace kvbench {

namespace {

// Norms and rotations run in float32, a float64 model's in float64 (as Model's ATen formulas).
template <typename T> struct ComputeOf { using type = float; };
template <> struct ComputeOf<double> { using type = double; };

// Rows per parallel task: enough work that a task outweighs handing it out.
int64_t grain_rows(int64_t width) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, width)); }

// Sum of squares in 8 interleaved partial sums, then ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)): a fixed order
// the compiler can keep in one vector register.
template <typename C, typename T>
C sum_of_squares(const T* x, int64_t n) {
  C lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) {
      const C v = static_cast<C>(x[i + l]);
      lane[l] += v * v;
    }
  C s = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
  for (; i < n; ++i) s += static_cast<C>(x[i]) * static_cast<C>(x[i]);
  return s;
}

template <typename T>
void rms_norm_rows(const T* x, const T* weight, T* out, int64_t rows, int64_t D, double eps) {
  using C = typename ComputeOf<T>::type;
  at::parallel_for(0, rows, grain_rows(D), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * D;
      const C mean = sum_of_squares<C>(xr, D) / static_cast<C>(D);
      const C scale = C(1) / std::sqrt(mean + static_cast<C>(eps));
      // Normalised, rounded to x's dtype, then scaled by the weight in that dtype (HF's order).
      for (int64_t i = 0; i < D; ++i)
        out[r * D + i] = static_cast<T>(static_cast<C>(weight[i]) * static_cast<C>(static_cast<T>(static_cast<C>(xr[i]) * scale)));
    }
  });
}

// x viewed as [outer, heads, inner, D], the tables as [outer, 1, inner, D].
struct RotateShape {
  int64_t outer = 1, heads = 1, inner = 1, D = 0;
};

template <typename T>
void rotate_rows(const T* x, const float* cos, const float* sin, T* out, const RotateShape& s) {
  using C = typename ComputeOf<T>::type;
  const int64_t half = s.D / 2, rows = s.outer * s.heads * s.inner;
  at::parallel_for(0, rows, grain_rows(s.D), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / (s.heads * s.inner), i = r % s.inner;
      const float *c = cos + (o * s.inner + i) * s.D, *sn = sin + (o * s.inner + i) * s.D;
      const T* xr = x + r * s.D;
      T* yr = out + r * s.D;
      // rotate_half(x) = [−x2, x1]; each product and the sum rounded on their own, as ATen's ops do.
      for (int64_t d = 0; d < s.D; ++d) {
        const C rotated = d < half ? -static_cast<C>(xr[d + half]) : static_cast<C>(xr[d - half]);
        const C a = static_cast<C>(xr[d]) * static_cast<C>(c[d]);
        const C b = rotated * static_cast<C>(sn[d]);
        yr[d] = static_cast<T>(a + b);
      }
    }
  });
}

// The shape of rotate_rows for x and a table that equals x's shape or broadcasts along one dim (not
// the last); nullopt otherwise.
std::optional<RotateShape> rotate_shape(const at::Tensor& x, const at::Tensor& table) {
  if (table.dim() != x.dim() || x.dim() < 1 || table.size(-1) != x.size(-1)) return std::nullopt;
  RotateShape s;
  s.D = x.size(-1);
  int64_t broadcast = -1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) {
    if (table.size(d) == x.size(d)) continue;
    if (table.size(d) != 1 || broadcast >= 0) return std::nullopt;
    broadcast = d;
  }
  for (int64_t d = 0; d + 1 < x.dim(); ++d) {
    if (broadcast < 0 || d < broadcast) s.outer *= x.size(d);
    else if (d == broadcast) s.heads = x.size(d);
    else s.inner *= x.size(d);
  }
  return s;
}

}  // namespace

bool fused_ops_apply(const at::Tensor& x, const at::Tensor& other) {
  const bool needs_grad = at::GradMode::is_enabled() && (x.requires_grad() || other.requires_grad());
  return x.is_cpu() && other.is_cpu() && !needs_grad && at::isFloatingType(x.scalar_type());
}

at::Tensor fused_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  if (weight.scalar_type() != x.scalar_type()) return {};
  const at::Tensor xc = x.contiguous(), w = weight.contiguous();
  at::Tensor out = at::empty_like(xc);
  const int64_t D = x.size(-1), rows = D ? x.numel() / D : 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x.scalar_type(), "fused_rms_norm", [&] {
    rms_norm_rows(xc.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), rows, D, eps);
  });
  return out;
}

at::Tensor fused_rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const auto shape = rotate_shape(x, cos);
  if (!shape || cos.sizes() != sin.sizes() || cos.scalar_type() != at::kFloat || sin.scalar_type() != at::kFloat)
    return {};
  const at::Tensor xc = x.contiguous(), c = cos.contiguous(), s = sin.contiguous();
  at::Tensor out = at::empty_like(xc);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x.scalar_type(), "fused_rotate", [&] {
    rotate_rows(xc.data_ptr<scalar_t>(), c.data_ptr<float>(), s.data_ptr<float>(), out.data_ptr<scalar_t>(), *shape);
  });
  return out;
}

}  // namespace kvbench
