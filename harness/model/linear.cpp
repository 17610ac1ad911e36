#include "model/linear.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/accumulate.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <functional>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "model/cpu_threads.h"
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

bool cpu_has_avx2_kernel() {
#if defined(KVBENCH_AVX2_KERNEL)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                          __builtin_cpu_supports("f16c");
  return has;
#else
  return false;
#endif
}

bool hardware_gemm(at::ScalarType dtype) {
  // The flags Linux reports (what the kernel lets programs use, AMX included), read once.
  static const std::set<std::string> flags = [] {
    std::set<std::string> found;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
      if (line.rfind("flags", 0) == 0) {
        std::istringstream words(line.substr(line.find(':') + 1));
        for (std::string flag; words >> flag;) found.insert(flag);
        break;
      }
    return found;
  }();
  const auto has = [&](const char* flag) { return flags.count(flag) > 0; };
  if (dtype == at::kBFloat16) return has("avx512_bf16") || has("amx_bf16");
  // libtorch sends float16 products to oneDNN's float16 GEMM from 2.3 on; 1.13 has only a reference loop.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  if (dtype == at::kHalf) return has("avx512_fp16") || has("amx_fp16");
#endif
  return false;
}

WeightType weight_type(at::ScalarType dtype) {
  switch (dtype) {
    case at::kBFloat16: return WeightType::bf16;
    case at::kHalf: return WeightType::f16;
    default: return WeightType::f32;
  }
}

namespace {

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
  if (cpu_has_avx2_kernel()) return widen_bf16_avx2(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(c10::BFloat16(in[i], c10::BFloat16::from_bits()));
}

void narrow_bf16(const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = c10::BFloat16(in[i]).x;
}

void narrow_f16(const float* in, uint16_t* out, int64_t n) {
  if (cpu_has_avx2_kernel()) return narrow_f16_avx2(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = c10::Half(in[i]).x;
}

namespace {

// Rows of x [..., K]: the product of its leading dimensions.
int64_t rows_of(const at::Tensor& x) { return c10::multiply_integers(x.sizes().slice(0, x.dim() - 1)); }

// x (the input, or a bias) in float32, contiguous. A 16-bit one is widened here (exactly, as .to(kFloat)
// would): an ATen conversion per product (of x, each way, and of a 16-bit bias) cost a decode step more
// than its norms and rotations together.
at::Tensor widened(const at::Tensor& x) {
  const at::ScalarType t = x.scalar_type();
  if (t != at::kHalf && t != at::kBFloat16) return x.to(at::kFloat).contiguous();
  const at::Tensor x16 = x.contiguous();
  at::Tensor out = at::empty(x16.sizes(), x16.options().dtype(at::kFloat));
  const auto widen = t == at::kHalf ? widen_f16 : widen_bf16;
  widen(static_cast<const uint16_t*>(x16.data_ptr()), out.data_ptr<float>(), x16.numel());
  return out;
}

// Moves float32 values to and from a pass's output dtype: float32 as they are; bfloat16 and float16
// rounded as .to() rounds, widened exactly. `round` is both, in place: the value the dtype stores.
struct OutputType {
  explicit OutputType(at::ScalarType dtype)
      : narrow(dtype == at::kBFloat16 ? narrow_bf16 : dtype == at::kHalf ? narrow_f16 : nullptr),
        widen(dtype == at::kBFloat16 ? widen_bf16 : widen_f16) {}
  void store(const float* from, void* to, int64_t n) const {
    if (narrow) return narrow(from, static_cast<uint16_t*>(to), n);
    std::copy(from, from + n, static_cast<float*>(to));
  }
  void load(const void* from, float* to, int64_t n) const {
    if (narrow) return widen(static_cast<const uint16_t*>(from), to, n);
    const auto* f = static_cast<const float*>(from);
    std::copy(f, f + n, to);
  }
  void round(float* v, int64_t n, std::vector<uint16_t>& scratch) const {
    if (!narrow) return;
    scratch.resize(n);
    narrow(v, scratch.data(), n);
    widen(scratch.data(), v, n);
  }
  void (*narrow)(const float*, uint16_t*, int64_t);
  void (*widen)(const uint16_t*, float*, int64_t);
};

}  // namespace

void store_as(at::ScalarType dtype, const float* from, void* to, int64_t n) { OutputType(dtype).store(from, to, n); }

namespace {

// silu(g) · u element by element, with std::exp: ATen's vectorised exp and its scalar tail round
// differently, and which elements fall in the tail depends on how many rows share a call.
void silu_times(float* g, const float* u, int64_t n, const OutputType& type, std::vector<uint16_t>& scratch) {
  for (int64_t i = 0; i < n; ++i) g[i] = g[i] / (1.0f + std::exp(-g[i]));
  type.round(g, n, scratch);
  for (int64_t i = 0; i < n; ++i) g[i] *= u[i];
}

// One thread's working rows while it stores a chunk.
struct Scratch {
  std::vector<float> a, b;
  std::vector<uint16_t> bits;
};

// One pass of the thread pool over products of one x [..., K]. The pass's outputs [..., N] are one per
// product (Combine::separate), or one result the products make together. float32 products stored
// separately are computed straight into their outputs; all others compute in float32 into one buffer
// (`computed`), and each chunk is stored from there. Its queue hands out the outputs' features: output
// j's are positions [first, first + N_j); a chunk of them runs every product output j is made of, then
// stores the chunk. Outputs are made in their final shape: a decode step runs ~100 passes, and each ATen
// op between them (a view, a reshape) costs more there than alone, its code and data cold after the
// weights streamed through the caches.
class SmallRowsPass {
 public:
  SmallRowsPass(const at::Tensor& x, const std::vector<Affine>& layers, Kernel kernel, at::ScalarType out_dtype,
                Combine combine, const at::Tensor& residual);
  std::vector<at::Tensor> run();

 private:
  struct Output {
    std::vector<size_t> products;  // indices into problems_
    at::Tensor tensor;             // [..., N], of the output dtype
    int64_t N = 0;
    int64_t first = 0;  // its first feature's position in the queue
  };

  void add_problem(const Affine& layer);
  void add_output(std::vector<size_t> products, int64_t N);
  const Output& output_of(int64_t feature) const;
  void store(const Output& out, int64_t begin, int64_t end, Scratch& scratch) const;

  const at::Tensor xf_;  // x in float32 [..., K], contiguous
  const int64_t K_, rows_;
  const bool simd_;
  const at::ScalarType out_dtype_;
  const OutputType type_;
  const Combine combine_;
  const bool stored_by_chunk_;
  const at::Tensor residual_;  // [..., N] of out_dtype_, Combine::residual only
  at::Tensor computed_, x_pairs_;
  std::vector<at::Tensor> kept_;  // what the problems read, beside x and `computed`
  std::vector<SmallRowsProblem> problems_;
  std::vector<Output> outputs_;
  int64_t total_ = 0;  // features in the queue
};

SmallRowsPass::SmallRowsPass(const at::Tensor& x, const std::vector<Affine>& layers, Kernel kernel,
                             at::ScalarType out_dtype, Combine combine, const at::Tensor& residual)
    : xf_(widened(x)),
      K_(xf_.size(-1)),
      rows_(rows_of(xf_)),
      simd_(kernel == Kernel::best && cpu_has_avx2_kernel()),
      out_dtype_(out_dtype),
      type_(out_dtype),
      combine_(combine),
      stored_by_chunk_(combine != Combine::separate || out_dtype != at::kFloat),
      residual_(combine == Combine::residual ? residual.contiguous() : at::Tensor()) {
  const int64_t N = layers.empty() ? 0 : layers.front().weight.size(0);
  TORCH_CHECK(combine != Combine::residual || (layers.size() == 1 && residual.numel() == rows_ * N &&
                                               residual.scalar_type() == out_dtype),
              "small_rows: a residual needs one product and a residual [..., N] of the output dtype");
  TORCH_CHECK(combine != Combine::swiglu || (layers.size() == 2 && layers[1].weight.size(0) == N),
              "small_rows: SwiGLU needs two products (gate, up) of one width");
  for (const Affine& layer : layers) add_problem(layer);
  if (combine == Combine::separate) {
    for (size_t i = 0; i < problems_.size(); ++i) add_output({i}, problems_[i].N);
  } else {
    std::vector<size_t> all(problems_.size());
    std::iota(all.begin(), all.end(), 0);
    add_output(all, N);
  }
  TORCH_CHECK(total_ < (int64_t{1} << 31), "small_rows: more output features than a pass's queue holds");
  if (stored_by_chunk_) {
    int64_t size = 0;
    for (const SmallRowsProblem& p : problems_) size += rows_ * p.N;
    computed_ = at::empty({size}, xf_.options());
    float* next = computed_.data_ptr<float>();
    for (SmallRowsProblem& p : problems_) p.out = std::exchange(next, next + rows_ * p.N);
  } else {
    for (const Output& out : outputs_) problems_[out.products.front()].out = out.tensor.data_ptr<float>();
  }
}

void SmallRowsPass::add_problem(const Affine& layer) {
  const at::Tensor w = kept_.emplace_back(layer.weight.contiguous());
  const at::Tensor b = layer.bias.defined() ? kept_.emplace_back(widened(layer.bias)) : at::Tensor();
  SmallRowsProblem& p = problems_.emplace_back();
  p.x = xf_.data_ptr<float>();
  p.weight = w.data_ptr();
  p.type = weight_type(w.scalar_type());
  p.bias = b.defined() ? b.data_ptr<float>() : nullptr;
  p.rows = rows_;
  p.K = K_;
  p.N = w.size(0);
  if (simd_ && p.type == WeightType::bf16) {
    if (!x_pairs_.defined()) {
      x_pairs_ = at::empty_like(xf_);
      pair_bf16_blocks(p.x, x_pairs_.data_ptr<float>(), rows_, K_);
    }
    p.x_pairs = x_pairs_.data_ptr<float>();
  }
}

void SmallRowsPass::add_output(std::vector<size_t> products, int64_t N) {
  std::vector<int64_t> shape = xf_.sizes().vec();
  shape.back() = N;
  outputs_.push_back({std::move(products), at::empty(shape, xf_.options().dtype(out_dtype_)), N, total_});
  total_ += N;
}

const SmallRowsPass::Output& SmallRowsPass::output_of(int64_t feature) const {
  size_t j = 0;
  while (feature >= outputs_[j].first + outputs_[j].N) ++j;
  return outputs_[j];
}

// Output `out`'s features [begin, end) of every row, from `computed` to its tensor: a 16-bit output is
// rounded chunk by chunk, while the chunk's float32 results are in cache. Each step rounds as the
// unfused ATen ops would: the products to the output dtype, then the sum or silu(gate), then the product.
void SmallRowsPass::store(const Output& out, int64_t begin, int64_t end, Scratch& s) const {
  const int64_t n = end - begin, N = out.N, element_size = at::elementSize(out_dtype_);
  const auto at_row = [&](const at::Tensor& t, int64_t m) { return static_cast<char*>(t.data_ptr()) + (m * N + begin) * element_size; };
  s.a.resize(n);
  s.b.resize(n);
  for (int64_t m = 0; m < rows_; ++m) {
    const float* product = problems_[out.products[0]].out + m * N + begin;
    if (combine_ == Combine::separate) {
      type_.store(product, at_row(out.tensor, m), n);
      continue;
    }
    std::copy(product, product + n, s.a.data());
    type_.round(s.a.data(), n, s.bits);
    if (combine_ == Combine::residual) {
      type_.load(at_row(residual_, m), s.b.data(), n);
      for (int64_t i = 0; i < n; ++i) s.a[i] = s.b[i] + s.a[i];
    } else {
      const float* up = problems_[out.products[1]].out + m * N + begin;
      std::copy(up, up + n, s.b.data());
      type_.round(s.b.data(), n, s.bits);
      silu_times(s.a.data(), s.b.data(), n, type_, s.bits);
    }
    type_.store(s.a.data(), at_row(out.tensor, m), n);
  }
}

// Each worker owns a contiguous share of the queue and takes chunks from its front; a worker whose share
// is done takes chunks from the back of the others'. So each thread reads one stream of weight rows, in
// which every register tile prefetches the next one's, and starts a stream cold once a pass, not once a
// chunk as with one queue that all threads take from (qwen2.5-0.5b decode, two processes taking turns,
// 20-24 pairs: float32 +3.9, +0.6, +1.6 %, bfloat16 +1.4 %; its products alone +0.2 to +3.7 %, bfloat16
// +6.9 %). A chunk is half of what is left of its share, within one output, a multiple of 12 features
// (every tile's width divides it), and from ~43 K multiply-adds (48 features of K = 896; 12 features at
// the fewest) to ~1 M (its float32 results still in cache when stored). Chunks shrink towards a share's
// end, so threads finish together, and a thread the OS preempts (other processes on the machine) delays
// the pass by a chunk, not by its share: with fixed chunks, an idle libgomp worker took 10 % of decode's
// CPU time. The smallest chunk is sized in work, not features: 48 rows of K = 4864 (the down projection)
// left the other thread waiting ~15 µs at the end of a pass; with 12, decode ran +2.5, +0.2 % (float32)
// and +5.0 % (bfloat16) faster, taking turns as above.
std::vector<at::Tensor> SmallRowsPass::run() {
  const auto compute = simd_ ? small_rows_avx2 : small_rows_scalar;
  const auto whole_tiles = [](int64_t features) { return features / 12 * 12; };  // every tile's width divides 12
  const int64_t per_feature = rows_ * K_ * static_cast<int64_t>(outputs_.front().products.size());
  const auto features_of = [&](int64_t work) { return whole_tiles(work / std::max<int64_t>(1, per_feature)); };
  const int64_t least = std::clamp<int64_t>(features_of(48 * 896), 12, 48);
  const int64_t most = std::max<int64_t>(least, features_of(int64_t{1} << 20));
  // A small pass runs on the calling thread: waking the pool costs more than its work (a tiny model such
  // as stories260K decoded 2.7 K tokens/s on one thread, 1.5 K on two).
  const int64_t workers = per_feature * total_ < kParallelWork ? 1 : std::min<int64_t>((total_ + 47) / 48, at::get_num_threads());
  const auto pack = [](int64_t begin, int64_t end) { return static_cast<uint64_t>(begin) | static_cast<uint64_t>(end) << 32; };
  std::vector<std::atomic<uint64_t>> shares(workers);
  for (int64_t w = 0; w < workers; ++w)
    shares[w] = pack(whole_tiles(total_ * w / workers), w + 1 == workers ? total_ : whole_tiles(total_ * (w + 1) / workers));
  // The chunk taken from the front (or back) of `share`, or an empty one when the share is done.
  const auto take = [&](std::atomic<uint64_t>& share, bool front) -> std::pair<int64_t, int64_t> {
    uint64_t now = share.load();
    while (true) {
      const int64_t begin = static_cast<int64_t>(now & 0xFFFFFFFFu), end = static_cast<int64_t>(now >> 32);
      if (begin >= end) return {0, 0};
      const int64_t step = std::clamp<int64_t>(whole_tiles((end - begin) / 2), least, most);
      if (front) {
        const Output& out = output_of(begin);
        const int64_t cut = std::min({begin + step, out.first + out.N, end});
        if (share.compare_exchange_weak(now, pack(cut, end))) return {begin, cut};
      } else {
        const Output& out = output_of(end - 1);
        const int64_t cut = std::max({whole_tiles(end - step), out.first, begin});
        if (share.compare_exchange_weak(now, pack(begin, cut))) return {cut, end};
      }
    }
  };
  at::parallel_for(0, workers, 1, [&](int64_t first, int64_t last) {
    Scratch scratch;
    const auto run_chunk = [&](std::pair<int64_t, int64_t> chunk) {
      const Output& out = output_of(chunk.first);
      const int64_t begin = chunk.first - out.first, end = chunk.second - out.first;
      for (const size_t i : out.products) compute(problems_[i], begin, end);
      if (stored_by_chunk_) store(out, begin, end, scratch);
    };
    for (int64_t w = first; w < last; ++w)
      for (auto chunk = take(shares[w], true); chunk.first < chunk.second; chunk = take(shares[w], true)) run_chunk(chunk);
    for (int64_t w = 0; w < workers; ++w)
      for (auto chunk = take(shares[w], false); chunk.first < chunk.second; chunk = take(shares[w], false)) run_chunk(chunk);
  });
  std::vector<at::Tensor> results;
  for (const Output& out : outputs_) results.push_back(out.tensor);
  return results;
}

}  // namespace

std::vector<at::Tensor> small_rows(const at::Tensor& x, const std::vector<Affine>& layers, Kernel kernel,
                                   at::ScalarType out_dtype, Combine combine, const at::Tensor& residual) {
  return SmallRowsPass(x, layers, kernel, out_dtype, combine, residual).run();
}

at::Tensor small_rows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, Kernel kernel) {
  return small_rows(x, {{weight, bias}}, kernel, at::kFloat, Combine::separate, {}).front();
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

// Many rows: BLAS (single-threaded, model/cpu_threads.h) on blocks of output features, one share per
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
  // The pool's threads do not inherit the caller's inference mode, and its tensors may only be written there.
  const bool inference = c10::InferenceMode::is_enabled();
  const auto run = [&](int64_t begin, int64_t end) {
    const c10::InferenceMode same_mode(inference);
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
  // Row-major, as our kernel's results: ATen reductions over a product (a policy's query statistics) follow
  // its layout, so a sample's rows must come out laid out alike whether BLAS or our kernel, alone or packed
  // with others (RowSegments), computed them.
  return out_t.t().contiguous();
}

// Many rows [M, K]: libtorch's 16-bit GEMM where the CPU has the instructions for it, else BLAS.
at::Tensor many_rows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const auto dtype = weight.scalar_type();
  if (x.scalar_type() == dtype && linear_detail::hardware_gemm(dtype))
    return bias.defined() ? at::linear(x, weight, bias.to(dtype)) : at::linear(x, weight);
  return blas_blocks(x, weight, bias);
}

// out [rows, N] → x's leading dimensions and dtype.
at::Tensor with_leading_dims_of(const at::Tensor& x, const at::Tensor& out) {
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = out.size(-1);
  return out.reshape(shape).to(x.scalar_type());
}

bool all_ours(const at::Tensor& x, const std::vector<Affine>& layers) {
  return std::all_of(layers.begin(), layers.end(), [&](const Affine& l) { return ours(x, l.weight, l.bias); });
}

// Whether our small-row kernel computes these products of x (one pass that can also combine them).
bool small_rows_serve(const at::Tensor& x, const std::vector<Affine>& layers) {
  return all_ours(x, layers) && linear_detail::rows_of(x) <= linear_detail::kSmallRows;
}

}  // namespace

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return linear(x, {{weight, bias}}).front();
}

std::vector<at::Tensor> linear(const at::Tensor& x, const std::vector<Affine>& layers) {
  std::vector<at::Tensor> outs;
  if (!all_ours(x, layers)) {
    for (const Affine& l : layers) outs.push_back(l.bias.defined() ? at::linear(x, l.weight, l.bias) : at::linear(x, l.weight));
    return outs;
  }
  const int64_t rows = linear_detail::rows_of(x);
  if (rows <= linear_detail::kSmallRows)
    return linear_detail::small_rows(x, layers, linear_detail::Kernel::best, x.scalar_type(),
                                     linear_detail::Combine::separate, {});
  const at::Tensor x2 = x.reshape({rows, x.size(-1)});
  for (const Affine& l : layers) outs.push_back(with_leading_dims_of(x, many_rows(x2, l.weight, l.bias)));
  return outs;
}

namespace {

// Whether our kernel can take this residual into its pass: anything else (a residual that broadcasts, of
// another dtype or device, or recording a gradient) is added by ATen.
bool plain_residual(const at::Tensor& x, const Affine& layer, const at::Tensor& residual) {
  std::vector<int64_t> out_shape = x.sizes().vec();
  out_shape.back() = layer.weight.size(0);
  return residual.sizes() == at::IntArrayRef(out_shape) && residual.scalar_type() == x.scalar_type() &&
         residual.is_cpu() && !(at::GradMode::is_enabled() && residual.requires_grad());
}

using Products = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

// Rows [begin, begin + count) of each row-aligned input.
std::vector<at::Tensor> narrow_all(const std::vector<at::Tensor>& inputs, int64_t begin, int64_t count) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : inputs) out.push_back(t.narrow(0, begin, count));
  return out;
}

// `small` (our kernel) over the rows of every segment of at most kSmallRows rows at once, `alone` over each
// larger segment by itself; the outputs (one or more, each [rows, ...]) reassembled in row order. `inputs`
// are the row-aligned operands [M, ...] (x, and a residual).
std::vector<at::Tensor> by_segments(const std::vector<at::Tensor>& inputs, const RowSegments& segments,
                                    const Products& small, const Products& alone) {
  TORCH_CHECK(std::accumulate(segments.begin(), segments.end(), int64_t{0}) == inputs.front().size(0),
              "linear: the row segments do not cover x's rows");
  const auto is_small = [](int64_t rows) { return rows <= linear_detail::kSmallRows; };
  if (std::all_of(segments.begin(), segments.end(), is_small)) return small(inputs);
  std::vector<std::vector<at::Tensor>> small_parts(inputs.size());
  for (int64_t s = 0, begin = 0; s < static_cast<int64_t>(segments.size()); begin += segments[s++])
    if (is_small(segments[s]))
      for (size_t i = 0; i < inputs.size(); ++i) small_parts[i].push_back(inputs[i].narrow(0, begin, segments[s]));
  std::vector<at::Tensor> small_inputs;
  for (const auto& parts : small_parts)
    if (!parts.empty()) small_inputs.push_back(at::cat(parts));
  const std::vector<at::Tensor> small_out = small_inputs.empty() ? std::vector<at::Tensor>() : small(small_inputs);
  std::vector<std::vector<at::Tensor>> pieces;
  int64_t small_row = 0;
  for (int64_t s = 0, begin = 0; s < static_cast<int64_t>(segments.size()); begin += segments[s++]) {
    const std::vector<at::Tensor> out = is_small(segments[s]) ? narrow_all(small_out, small_row, segments[s])
                                                              : alone(narrow_all(inputs, begin, segments[s]));
    if (is_small(segments[s])) small_row += segments[s];
    pieces.resize(out.size());
    for (size_t o = 0; o < out.size(); ++o) pieces[o].push_back(out[o]);
  }
  std::vector<at::Tensor> outs;
  for (const auto& parts : pieces) outs.push_back(at::cat(parts));
  return outs;
}

}  // namespace

std::vector<at::Tensor> linear(const at::Tensor& x, const std::vector<Affine>& layers, const RowSegments& segments) {
  if (segments.size() <= 1 || !all_ours(x, layers)) return linear(x, layers);
  return by_segments(
      {x}, segments,
      [&](const std::vector<at::Tensor>& in) {
        return linear_detail::small_rows(in[0], layers, linear_detail::Kernel::best, x.scalar_type(),
                                         linear_detail::Combine::separate, {});
      },
      [&](const std::vector<at::Tensor>& in) { return linear(in[0], layers); });
}

at::Tensor linear_residual(const at::Tensor& x, const Affine& layer, const at::Tensor& residual,
                           const RowSegments& segments) {
  if (segments.size() <= 1 || !all_ours(x, {layer}) || !plain_residual(x, layer, residual))
    return linear_residual(x, layer, residual);
  return by_segments(
             {x, residual}, segments,
             [&](const std::vector<at::Tensor>& in) {
               return linear_detail::small_rows(in[0], {layer}, linear_detail::Kernel::best, x.scalar_type(),
                                                linear_detail::Combine::residual, in[1]);
             },
             [&](const std::vector<at::Tensor>& in) { return std::vector{linear_residual(in[0], layer, in[1])}; })
      .front();
}

at::Tensor linear_swiglu(const at::Tensor& x, const Affine& gate, const Affine& up, const RowSegments& segments) {
  if (segments.size() <= 1 || !all_ours(x, {gate, up})) return linear_swiglu(x, gate, up);
  return by_segments(
             {x}, segments,
             [&](const std::vector<at::Tensor>& in) {
               return linear_detail::small_rows(in[0], {gate, up}, linear_detail::Kernel::best, x.scalar_type(),
                                                linear_detail::Combine::swiglu, {});
             },
             [&](const std::vector<at::Tensor>& in) { return std::vector{linear_swiglu(in[0], gate, up)}; })
      .front();
}

at::Tensor linear_residual(const at::Tensor& x, const Affine& layer, const at::Tensor& residual) {
  if (!plain_residual(x, layer, residual) || !small_rows_serve(x, {layer})) return residual + linear(x, layer.weight, layer.bias);
  return linear_detail::small_rows(x, {layer}, linear_detail::Kernel::best, x.scalar_type(),
                                   linear_detail::Combine::residual, residual)
      .front();
}

at::Tensor linear_swiglu(const at::Tensor& x, const Affine& gate, const Affine& up) {
  if (small_rows_serve(x, {gate, up}))
    return linear_detail::small_rows(x, {gate, up}, linear_detail::Kernel::best, x.scalar_type(),
                                     linear_detail::Combine::swiglu, {})
        .front();
  const std::vector<at::Tensor> gate_up = linear(x, {gate, up});
  const at::ScalarType dtype = gate_up[0].scalar_type();
  // libtorch 1.13's CPU silu rounds each of its steps to bfloat16 (and has no float16 one): float32, as
  // the pass above and CUDA compute it.
  if (gate_up[0].is_cpu() && is_16bit(dtype)) {
    const at::Tensor activated = at::silu(gate_up[0].to(at::kFloat)).to(dtype);
    return (activated.to(at::kFloat) * gate_up[1].to(at::kFloat)).to(dtype);
  }
  return at::silu(gate_up[0]) * gate_up[1];
}

}  // namespace kvbench
