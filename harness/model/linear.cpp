#include "model/linear.h"

#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/accumulate.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "engine/cpu_threads.h"
#include "model/linear_kernels.h"

namespace kvbench {

namespace linear_detail {

namespace {

template <typename Element>
float widen(Element w) {
  return static_cast<float>(w);
}

// The arithmetic of linear_kernels.h, one element at a time. std::fma rounds like the hardware FMA, so
// this agrees bit for bit with the AVX2 kernel (and is an instruction on aarch64, a libm call on x86
// CPUs without FMA, the only x86 CPUs that run it).
template <typename Element>
void portable(const SmallRowsProblem& p, int64_t n_begin, int64_t n_end) {
  const auto* weight = static_cast<const Element*>(p.weight);
  const int64_t K_blocks = p.K - p.K % block_columns(p.type);
  for (int64_t m = 0; m < p.rows; ++m)
    for (int64_t n = n_begin; n < n_end; ++n) {
      const float* x = p.x + m * p.K;
      const Element* w = weight + n * p.K;
      float lane[8] = {};
      for (int64_t k = 0; k < K_blocks; ++k) {
        float& l = lane[lane_of(p.type, k)];
        l = std::fma(x[k], widen(w[k]), l);
      }
      float s = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
      for (int64_t k = K_blocks; k < p.K; ++k) s = std::fma(x[k], widen(w[k]), s);
      if (p.bias) s += p.bias[n];
      p.out[m * p.N + n] = s;
    }
}

}  // namespace

void small_rows_scalar(const SmallRowsProblem& p, int64_t n_begin, int64_t n_end) {
  switch (p.type) {
    case WeightType::f32: return portable<float>(p, n_begin, n_end);
    case WeightType::bf16: return portable<c10::BFloat16>(p, n_begin, n_end);
    case WeightType::f16: return portable<c10::Half>(p, n_begin, n_end);
  }
}

namespace {

bool cpu_has_avx2_kernel() {
#if defined(KVBENCH_AVX2_KERNEL)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                          __builtin_cpu_supports("f16c");
  return has;
#else
  return false;
#endif
}

WeightType weight_type(at::ScalarType dtype) {
  switch (dtype) {
    case at::kBFloat16: return WeightType::bf16;
    case at::kHalf: return WeightType::f16;
    default: return WeightType::f32;
  }
}

}  // namespace

void pair_bf16_blocks(const float* x, float* out, int64_t rows, int64_t K) {
  const int64_t blocks_end = K - K % 16;
  for (int64_t m = 0; m < rows; ++m, x += K, out += K) {
    for (int64_t b = 0; b < blocks_end; b += 16)
      for (int64_t j = 0; j < 8; ++j) {
        out[b + j] = x[b + 2 * j];
        out[b + 8 + j] = x[b + 2 * j + 1];
      }
    for (int64_t k = blocks_end; k < K; ++k) out[k] = x[k];
  }
}

void widen_f16(const uint16_t* in, float* out, int64_t n) {
  if (cpu_has_avx2_kernel()) return widen_f16_avx2(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(c10::Half(in[i], c10::Half::from_bits()));
}

at::Tensor small_rows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, Kernel kernel) {
  const at::Tensor xf = x.to(at::kFloat).contiguous(), w = weight.contiguous();
  const at::Tensor b = bias.defined() ? bias.to(at::kFloat).contiguous() : at::Tensor();
  at::Tensor out = at::empty({xf.size(0), w.size(0)}, xf.options());
  SmallRowsProblem p;
  p.x = xf.data_ptr<float>();
  p.weight = w.data_ptr();
  p.type = weight_type(w.scalar_type());
  p.bias = b.defined() ? b.data_ptr<float>() : nullptr;
  p.out = out.data_ptr<float>();
  p.rows = xf.size(0);
  p.K = xf.size(1);
  p.N = w.size(0);
  const bool simd = kernel == Kernel::best && cpu_has_avx2_kernel();
  const auto run = simd ? small_rows_avx2 : small_rows_scalar;
  at::Tensor x_pairs;
  if (simd && p.type == WeightType::bf16) {
    x_pairs = at::empty_like(xf);
    pair_bf16_blocks(p.x, x_pairs.data_ptr<float>(), p.rows, p.K);
    p.x_pairs = x_pairs.data_ptr<float>();
  }
  // Chunks of output features handed out one at a time: a thread the OS preempts (other processes on
  // the machine) delays the product by one chunk, not by its static share. At least four per thread, at
  // most ~1 M multiply-adds (4 MiB of float32 weights for one row): each chunk is one contiguous stream,
  // and longer streams read faster (one row, 2 threads on 2 vCPUs: LM head 37–43 GB/s with 64 K chunks,
  // 45–49 with 1 M; decode 24.3/25.2 → 25.3/26.4 tokens/s). At least 48 rows (a multiple of every AVX2
  // register tile's width), so register tiles stay full.
  const int64_t most = (int64_t{1} << 20) / std::max<int64_t>(1, p.rows * p.K);
  const int64_t even_share = p.N / (4 * at::get_num_threads());
  const int64_t chunk = std::max<int64_t>(48, std::min(most, even_share) / 12 * 12);
  const int64_t chunks = (p.N + chunk - 1) / chunk;
  // A small product runs on the calling thread: waking the pool costs more than its work (a tiny model
  // such as stories260K decoded 2.7 K tokens/s on one thread, 1.5 K on two).
  const int64_t workers = p.rows * p.K * p.N < kParallelWork ? 1 : std::min<int64_t>(chunks, at::get_num_threads());
  std::atomic<int64_t> next{0};
  at::parallel_for(0, workers, 1, [&](int64_t, int64_t) {
    for (int64_t c = next++; c < chunks; c = next++) run(p, c * chunk, std::min(p.N, (c + 1) * chunk));
  });
  return out;
}

}  // namespace linear_detail

namespace {

bool is_16bit(at::ScalarType t) { return t == at::kBFloat16 || t == at::kHalf; }

// Our kernels cover CPU float32/bfloat16/float16 weights with x in float32 or the weight's dtype, and no
// autograd; everything else is at::linear's.
bool ours(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const auto wt = weight.scalar_type(), xt = x.scalar_type();
  const bool needs_grad = at::GradMode::is_enabled() &&
                          (x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()));
  return x.device().is_cpu() && weight.device().is_cpu() && !needs_grad && weight.dim() == 2 &&
         (wt == at::kFloat || is_16bit(wt)) && (xt == at::kFloat || xt == wt) && x.dim() >= 1 &&
         x.size(-1) == weight.size(1) && (!bias.defined() || (bias.device().is_cpu() && bias.numel() == weight.size(0)));
}

// Many rows: BLAS (single-threaded, engine/cpu_threads.h) on blocks of output features, one share per
// physical core in libtorch's pool. 16-bit weights are upcast one block (≤ 4 MiB of float32) at a time,
// never the whole weight (an LM head would take hundreds of MiB); float32 blocks are views. BLAS writes
// straight into rows of the transposed result, pre-filled with the bias: an ATen op between BLAS calls
// (a copy) left libtorch's workers spinning on the hyperthread BLAS ran on, at 40 % of its speed.
at::Tensor blas_blocks(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const int64_t N = weight.size(0), K = weight.size(1), M = x.size(0);
  const int64_t fits = (int64_t{1} << 20) / std::max<int64_t>(1, K);
  const int64_t per_core = (N + compute_threads() - 1) / compute_threads();
  const int64_t block = std::max<int64_t>(16, std::min(fits, per_core));
  const at::Tensor xt = x.to(at::kFloat).t();
  at::Tensor out_t = bias.defined() ? bias.to(at::kFloat).unsqueeze(1).expand({N, M}).contiguous()
                                    : at::empty({N, M}, xt.options());
  const auto run = [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; n += block) {
      const int64_t len = std::min(block, end - n);
      at::Tensor rows = out_t.narrow(0, n, len);
      const at::Tensor w = weight.narrow(0, n, len).to(at::kFloat);
      if (bias.defined()) {
        at::addmm_out(rows, rows, w, xt);
      } else {
        at::mm_out(rows, w, xt);
      }
    }
  };
  // One chunk runs outside any parallel region.
  if (per_core >= N) {
    run(0, N);
  } else {
    at::parallel_for(0, N, per_core, run);
  }
  return out_t.t();
}

}  // namespace

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (!ours(x, weight, bias)) return bias.defined() ? at::linear(x, weight, bias) : at::linear(x, weight);
  const int64_t K = weight.size(1), rows = c10::multiply_integers(x.sizes().slice(0, x.dim() - 1));
  const at::Tensor x2 = x.reshape({rows, K});
  const at::Tensor out = rows > linear_detail::kSmallRows ? blas_blocks(x2, weight, bias)
                                                         : linear_detail::small_rows(x2, weight, bias);
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = weight.size(0);
  return out.reshape(shape).to(x.scalar_type());
}

}  // namespace kvbench
