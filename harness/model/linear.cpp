#include "model/linear.h"

#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/accumulate.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <utility>

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

void widen_bf16(const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(c10::BFloat16(in[i], c10::BFloat16::from_bits()));
}

void narrow_f16(const float* in, uint16_t* out, int64_t n) {
  if (cpu_has_avx2_kernel()) return narrow_f16_avx2(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = c10::Half(in[i]).x;
}

namespace {

// x [rows, K] in float32, contiguous. A 16-bit x is widened here (exactly, as .to(kFloat) would): one ATen
// conversion each way per product cost a decode step more than its norms and rotations together.
at::Tensor widened(const at::Tensor& x) {
  if (x.scalar_type() == at::kFloat) return x.contiguous();
  const at::Tensor x16 = x.contiguous();
  at::Tensor out = at::empty(x16.sizes(), x16.options().dtype(at::kFloat));
  const auto widen = x16.scalar_type() == at::kHalf ? widen_f16 : widen_bf16;
  widen(static_cast<const uint16_t*>(x16.data_ptr()), out.data_ptr<float>(), x16.numel());
  return out;
}

// float32 → bfloat16, n values, rounded as .to() rounds (to nearest, ties to even).
void narrow_bf16(const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = c10::BFloat16(in[i]).x;
}

// Rounds one product's outputs [rows, n_begin, n_end) from float32 (`from`, [rows, N]) to its 16-bit `to`.
template <void (*narrow_row)(const float*, uint16_t*, int64_t)>
void narrow_rows(const float* from, at::Tensor& to, int64_t rows, int64_t N, int64_t n_begin, int64_t n_end) {
  auto* out = static_cast<uint16_t*>(to.data_ptr());
  for (int64_t m = 0; m < rows; ++m) narrow_row(from + m * N + n_begin, out + m * N + n_begin, n_end - n_begin);
}

}  // namespace

std::vector<at::Tensor> small_rows(const at::Tensor& x, const std::vector<Affine>& layers, Kernel kernel,
                                   at::ScalarType out_dtype) {
  const at::Tensor xf = widened(x);
  const int64_t rows = xf.size(0), K = xf.size(1);
  const bool simd = kernel == Kernel::best && cpu_has_avx2_kernel();
  const auto run = simd ? small_rows_avx2 : small_rows_scalar;
  const auto narrow = out_dtype == at::kBFloat16 ? narrow_rows<narrow_bf16>
                      : out_dtype == at::kHalf   ? narrow_rows<narrow_f16>
                                                 : nullptr;
  // The queue below hands out the products' output features; problem i's are positions
  // [first[i], first[i] + N_i). Every product computes into one float32 buffer, at rows · first[i].
  int64_t total = 0;
  std::vector<int64_t> first;
  for (const Affine& layer : layers) first.push_back(std::exchange(total, total + layer.weight.size(0)));
  const at::Tensor computed = at::empty({rows * total}, xf.options());
  at::Tensor x_pairs;
  std::vector<at::Tensor> kept, outs;  // what the problems read (beside x and `computed`); the results
  std::vector<SmallRowsProblem> problems;
  for (size_t i = 0; i < layers.size(); ++i) {
    const at::Tensor w = kept.emplace_back(layers[i].weight.contiguous());
    const at::Tensor& bias = layers[i].bias;
    const at::Tensor b = bias.defined() ? kept.emplace_back(bias.to(at::kFloat).contiguous()) : at::Tensor();
    const int64_t N = w.size(0);
    const at::Tensor out = computed.narrow(0, rows * first[i], rows * N).view({rows, N});
    outs.push_back(narrow ? at::empty({rows, N}, xf.options().dtype(out_dtype)) : out);
    SmallRowsProblem& p = problems.emplace_back();
    p.x = xf.data_ptr<float>();
    p.weight = w.data_ptr();
    p.type = weight_type(w.scalar_type());
    p.bias = b.defined() ? b.data_ptr<float>() : nullptr;
    p.out = out.data_ptr<float>();
    p.rows = rows;
    p.K = K;
    p.N = N;
    if (simd && p.type == WeightType::bf16) {
      if (!x_pairs.defined()) {
        x_pairs = at::empty_like(xf);
        pair_bf16_blocks(p.x, x_pairs.data_ptr<float>(), rows, K);
      }
      p.x_pairs = x_pairs.data_ptr<float>();
    }
  }
  // The products' output features form one queue, handed out in chunks: a thread takes a contiguous
  // stream of one product's weight rows (longer streams read faster: one row, 2 threads on 2 vCPUs, LM
  // head 37–43 GB/s with 64 K multiply-add chunks, 45–49 with 1 M). A chunk is half of an even share of
  // the rows left, at most ~1 M multiply-adds and at least 48 rows (a multiple of every AVX2 register
  // tile's width, so tiles stay full): chunks shrink towards the end, so threads finish together. With
  // fixed chunks, and one pool pass per product, an idle libgomp worker took 10 % of decode's CPU time.
  // A thread the OS preempts (other processes on the machine) delays the pass by one chunk, not by its
  // static share. A 16-bit output is rounded chunk by chunk, while the chunk's float32 results are in cache.
  const int64_t threads = at::get_num_threads();
  const int64_t most = std::max<int64_t>(48, (int64_t{1} << 20) / std::max<int64_t>(1, rows * K) / 12 * 12);
  const auto chunk_end = [&](int64_t begin, size_t i) {
    const int64_t share = std::clamp<int64_t>((total - begin) / (2 * threads) / 12 * 12, 48, most);
    return std::min(begin + share, first[i] + problems[i].N);
  };
  // A small pass runs on the calling thread: waking the pool costs more than its work (a tiny model such
  // as stories260K decoded 2.7 K tokens/s on one thread, 1.5 K on two).
  const int64_t workers = rows * K * total < kParallelWork ? 1 : std::min<int64_t>((total + 47) / 48, threads);
  std::atomic<int64_t> next{0};
  at::parallel_for(0, workers, 1, [&](int64_t, int64_t) {
    size_t i = 0;
    for (int64_t begin = next.load(); begin < total;) {
      while (begin >= first[i] + problems[i].N) ++i;  // the queue only moves forward
      const int64_t end = chunk_end(begin, i);
      if (next.compare_exchange_weak(begin, end)) {
        const SmallRowsProblem& p = problems[i];
        run(p, begin - first[i], end - first[i]);
        if (narrow) narrow(p.out, outs[i], rows, p.N, begin - first[i], end - first[i]);
        begin = next.load();
      }
    }
  });
  return outs;
}

at::Tensor small_rows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, Kernel kernel) {
  return small_rows(x, {{weight, bias}}, kernel, at::kFloat).front();
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

// out [rows, N] → x's leading dimensions and dtype.
at::Tensor with_leading_dims_of(const at::Tensor& x, const at::Tensor& out) {
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = out.size(-1);
  return out.reshape(shape).to(x.scalar_type());
}

}  // namespace

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return linear(x, {{weight, bias}}).front();
}

std::vector<at::Tensor> linear(const at::Tensor& x, const std::vector<Affine>& layers) {
  const auto is_ours = [&](const Affine& l) { return ours(x, l.weight, l.bias); };
  std::vector<at::Tensor> outs;
  if (std::all_of(layers.begin(), layers.end(), is_ours)) {
    const int64_t K = x.size(-1), rows = c10::multiply_integers(x.sizes().slice(0, x.dim() - 1));
    const at::Tensor x2 = x.reshape({rows, K});
    if (rows <= linear_detail::kSmallRows) {
      outs = linear_detail::small_rows(x2, layers, linear_detail::Kernel::best, x.scalar_type());
    } else {
      for (const Affine& l : layers) outs.push_back(blas_blocks(x2, l.weight, l.bias));
    }
    for (at::Tensor& out : outs) out = with_leading_dims_of(x, out);
  } else {
    for (const Affine& l : layers) outs.push_back(l.bias.defined() ? at::linear(x, l.weight, l.bias) : at::linear(x, l.weight));
  }
  return outs;
}

}  // namespace kvbench
