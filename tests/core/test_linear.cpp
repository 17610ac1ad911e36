// kvbench::linear (model/linear.h) against a float64 product, its row-independence contract, and the
// portable kernel against the SIMD one.
#include "torch_catch.h"

#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <cstring>
#include <numeric>
#include <random>

#include "model/linear.h"
#include "model/linear_kernels.h"
#include "model_test_util.h"

using namespace kvbench;
using kvbench::testing::ThreadsFor;

namespace {

const at::ScalarType kDtypes[] = {at::kFloat, at::kBFloat16, at::kHalf};

at::Tensor random(std::vector<int64_t> shape, at::ScalarType dtype, uint64_t seed) {
  at::manual_seed(seed);
  return at::randn(shape, at::kFloat).to(dtype);
}

// Any float32 summation of K products (FMA or not, any order) is within K·u·Σ|x_k w_k| of the exact
// dot product (u = 2^-24; Higham's γ_K, first order); one more u covers the bias addition, and rounding
// the result to a 16-bit x's dtype adds at most u_out·|value| (2^-8 bfloat16, 2^-11 float16). The inputs
// are exact in float64, so the reference is exact to float64 rounding.
void check_against_float64(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  const at::Tensor out = linear(x, w, b);
  REQUIRE(out.scalar_type() == x.scalar_type());
  const at::Tensor xd = x.to(at::kDouble), wd = w.to(at::kDouble);
  const at::Tensor ref = b.defined() ? at::linear(xd, wd, b.to(at::kDouble)) : at::linear(xd, wd);
  const double K = static_cast<double>(w.size(1)), u = std::ldexp(1.0, -24);
  const double u_out = x.scalar_type() == at::kBFloat16 ? std::ldexp(1.0, -8)
                       : x.scalar_type() == at::kHalf  ? std::ldexp(1.0, -11)
                                                        : 0.0;
  at::Tensor magnitude = at::linear(xd.abs(), wd.abs());
  if (b.defined()) magnitude = magnitude + b.to(at::kDouble).abs();
  const at::Tensor bound = (K + 1) * u * magnitude + u_out * ref.abs() * (1 + (K + 1) * u) + 1e-30;
  const at::Tensor excess = (out.to(at::kDouble) - ref).abs() / bound;
  INFO("dtype " << x.scalar_type() << " x " << x.sizes() << " weight " << w.sizes() << " bias " << b.defined());
  CHECK(excess.max().item<double>() <= 1.0);
}

}  // namespace

TEST_CASE("linear equals a float64 product within float32 accumulation error, any dtype and shape", "[linear][model]") {
  struct Shape {
    int64_t rows, K, N;
  };
  // Tails in K (not a multiple of 8), one output, odd tiles, the largest small-row count, and past it
  // (BLAS, 16-bit weights upcast in blocks).
  const Shape shapes[] = {{1, 1, 1},  {1, 7, 5},   {3, 17, 1},   {5, 33, 10},  {1, 896, 131},
                          {7, 8, 4},  {64, 100, 37}, {65, 130, 20}, {200, 64, 9}, {2, 0, 3}};
  uint64_t seed = 1;
  for (const at::ScalarType dtype : kDtypes)
    for (const Shape& s : shapes)
      for (const bool with_bias : {false, true}) {
        const at::Tensor w = random({s.N, s.K}, dtype, seed++);
        const at::Tensor b = with_bias ? random({s.N}, dtype, seed++) : at::Tensor();
        check_against_float64(random({s.rows, s.K}, dtype, seed++), w, b);
        if (dtype != at::kFloat) check_against_float64(random({s.rows, s.K}, at::kFloat, seed++), w, b);
      }
}

TEST_CASE("linear keeps leading dimensions of x", "[linear][model]") {
  for (const at::ScalarType dtype : kDtypes) {
    const at::Tensor x = random({2, 3, 19}, dtype, 7), w = random({11, 19}, dtype, 8), b = random({11}, dtype, 9);
    REQUIRE(linear(x, w, b).sizes() == at::IntArrayRef({2, 3, 11}));
    check_against_float64(x, w, b);
  }
}

TEST_CASE("linear rows are bitwise independent of the other rows, their position and the thread count",
          "[linear][model]") {
  // K % 8 = 3: the tail too. N: enough outputs that even one row's product is split into chunks over
  // the threads (linear_detail::kParallelWork), and not a multiple of any register tile's width.
  const int64_t K = 203, N = 1501;
  for (const at::ScalarType dtype : kDtypes) {
    const at::Tensor x = random({linear_detail::kSmallRows, K}, dtype, 11);
    const at::Tensor w = random({N, K}, dtype, 12), b = random({N}, dtype, 13);
    std::vector<at::Tensor> alone;
    {
      ThreadsFor one(1);
      for (int64_t r = 0; r < x.size(0); ++r) alone.push_back(linear(x.narrow(0, r, 1), w, b));
    }
    for (const int threads : {1, 2}) {
      ThreadsFor set(threads);
      for (int64_t M = 1; M <= linear_detail::kSmallRows; ++M)
        for (const int64_t first : {int64_t{0}, linear_detail::kSmallRows - M}) {
          const at::Tensor out = linear(x.narrow(0, first, M), w, b);
          for (int64_t r = 0; r < M; ++r) {
            INFO("dtype " << dtype << ", " << threads << " threads, rows " << first << ".." << first + M << ", row " << r);
            REQUIRE(at::equal(out.narrow(0, r, 1), alone[first + r]));
          }
        }
    }
  }
}

TEST_CASE("products computed together are bitwise the products computed alone", "[linear][model]") {
  // Shapes of a layer's q/k/v and gate/up, scaled down: outputs split over threads only together
  // (K · N below linear_detail::kParallelWork for the small ones), chunks that would straddle two
  // products, an output count under one chunk, weights of mixed dtypes, and rows past kSmallRows (BLAS).
  const int64_t K = 203;
  const std::vector<int64_t> outputs = {1200, 37, 37, 5, 1501};
  uint64_t seed = 200;
  for (const at::ScalarType dtype : kDtypes)
    for (const int64_t rows : {int64_t{1}, int64_t{5}, linear_detail::kSmallRows, linear_detail::kSmallRows + 3})
      for (const int threads : {1, 2}) {
        ThreadsFor set(threads);
        const at::Tensor x = random({rows, K}, at::kFloat, seed++);
        std::vector<Affine> layers;
        for (size_t i = 0; i < outputs.size(); ++i) {
          const at::ScalarType w_dtype = i % 2 ? at::kFloat : dtype;
          layers.push_back({random({outputs[i], K}, w_dtype, seed++), i % 3 ? random({outputs[i]}, w_dtype, seed++) : at::Tensor()});
        }
        const std::vector<at::Tensor> together = linear(x, layers);
        REQUIRE(together.size() == layers.size());
        for (size_t i = 0; i < layers.size(); ++i) {
          INFO("dtype " << dtype << ", rows " << rows << ", " << threads << " threads, product " << i);
          REQUIRE(at::equal(together[i], linear(x, layers[i].weight, layers[i].bias)));
        }
      }
}

TEST_CASE("a 16-bit x gives the float32 products of its values, rounded as .to() rounds", "[linear][model]") {
  // linear() widens a 16-bit x and rounds its outputs itself (no ATen conversions on the decode path);
  // the reference does both with ATen. Rows past kSmallRows take the BLAS path, which converts with ATen,
  // or on a CPU with 16-bit instructions libtorch's 16-bit GEMM (checked against float64 instead).
  const int64_t K = 203;
  uint64_t seed = 300;
  for (const at::ScalarType dtype : {at::kBFloat16, at::kHalf})
    for (const int64_t rows : {int64_t{1}, int64_t{7}, linear_detail::kSmallRows + 1})
      for (const int threads : {1, 2}) {
        ThreadsFor set(threads);
        const at::Tensor x = random({rows, K}, dtype, seed++);
        const std::vector<Affine> layers = {{random({1501, K}, dtype, seed++), random({1501}, dtype, seed++)},
                                            {random({37, K}, dtype, seed++), at::Tensor()}};
        const std::vector<at::Tensor> out = linear(x, layers);
        for (size_t i = 0; i < layers.size(); ++i) {
          INFO("dtype " << dtype << ", rows " << rows << ", " << threads << " threads, product " << i);
          REQUIRE(out[i].scalar_type() == dtype);
          if (rows > linear_detail::kSmallRows && linear_detail::hardware_gemm(dtype)) {
            // libtorch's 16-bit GEMM accumulates in float32 in an order of its own: within the accumulation
            // bound of the exact product, not bitwise the product of x's values in float32.
            check_against_float64(x, layers[i].weight, layers[i].bias);
            continue;
          }
          REQUIRE(at::equal(out[i], linear(x.to(at::kFloat), layers[i].weight, layers[i].bias).to(dtype)));
        }
      }
}

// The value `v` takes when stored in `dtype` (float32: itself).
at::Tensor rounded(const at::Tensor& v, at::ScalarType dtype) { return v.to(dtype).to(at::kFloat); }

TEST_CASE("a residual added in the product's pass is the product added by ATen", "[linear][model]") {
  // linear_residual sums inside the pass on the decode path; the reference is two ATen ops. Rows past
  // kSmallRows take the fallback, which is those two ops.
  const int64_t K = 203, N = 1501;
  uint64_t seed = 400;
  for (const at::ScalarType dtype : kDtypes)
    for (const int64_t rows : {int64_t{1}, int64_t{7}, linear_detail::kSmallRows, linear_detail::kSmallRows + 1})
      for (const int threads : {1, 2}) {
        ThreadsFor set(threads);
        const at::Tensor x = random({rows, K}, dtype, seed++), residual = random({rows, N}, dtype, seed++);
        const Affine layer = {random({N, K}, dtype, seed++), random({N}, dtype, seed++)};
        const at::Tensor out = linear_residual(x, layer, residual);
        INFO("dtype " << dtype << ", rows " << rows << ", " << threads << " threads");
        REQUIRE(out.scalar_type() == dtype);
        REQUIRE(at::equal(out, residual + linear(x, layer.weight, layer.bias)));
        // A residual that broadcasts is ATen's to add.
        const at::Tensor row = residual.narrow(0, 0, 1);
        REQUIRE(at::equal(linear_residual(x, layer, row), row + linear(x, layer.weight, layer.bias)));
      }
}

TEST_CASE("SwiGLU in the products' pass is silu(gate) · up of the products, each step rounded", "[linear][model]") {
  // The reference: both products computed alone, then silu(g) = g / (1 + exp(-g)) element by element,
  // rounded to the dtype, times up, rounded (HF's ops in bfloat16). Rows 1..7 of a 7-row call must also
  // equal each row alone (batched decoding). Past kSmallRows the fallback uses at::silu, whose
  // vectorised exp may differ from std::exp by an ulp of float32 before rounding: compared within one
  // ulp of the dtype there.
  const int64_t K = 203, N = 1501;
  uint64_t seed = 500;
  for (const at::ScalarType dtype : kDtypes)
    for (const int64_t rows : {int64_t{1}, int64_t{7}, linear_detail::kSmallRows + 1})
      for (const int threads : {1, 2}) {
        ThreadsFor set(threads);
        const at::Tensor x = random({rows, K}, dtype, seed++);
        const Affine gate = {random({N, K}, dtype, seed++), random({N}, dtype, seed++)};
        const Affine up = {random({N, K}, dtype, seed++), at::Tensor()};
        const at::Tensor out = linear_swiglu(x, gate, up);
        const at::Tensor g = linear(x, gate.weight, gate.bias).to(at::kFloat).contiguous();
        const at::Tensor u = linear(x, up.weight, up.bias).to(at::kFloat);
        at::Tensor silu = at::empty_like(g);
        for (int64_t i = 0; i < g.numel(); ++i) {
          const float v = g.data_ptr<float>()[i];
          silu.data_ptr<float>()[i] = v / (1.0f + std::exp(-v));
        }
        const at::Tensor expected = (rounded(silu, dtype) * u).to(dtype);
        INFO("dtype " << dtype << ", rows " << rows << ", " << threads << " threads");
        REQUIRE(out.scalar_type() == dtype);
        if (rows <= linear_detail::kSmallRows) {
          REQUIRE(at::equal(out, expected));
          for (int64_t r = 0; r < rows; ++r) REQUIRE(at::equal(out.narrow(0, r, 1), linear_swiglu(x.narrow(0, r, 1), gate, up)));
        } else {
          const double ulp = dtype == at::kBFloat16 ? 0x1p-7 : dtype == at::kHalf ? 0x1p-10 : 0x1p-22;
          REQUIRE(at::allclose(out.to(at::kFloat), expected.to(at::kFloat), ulp, 1e-6));
        }
      }
}

TEST_CASE("float16 rounding of products agrees with c10::Half on every kind of float", "[linear][model]") {
  // Random bit patterns (normals, subnormals, overflow to infinity, ties at every exponent), NaN
  // excluded (its payload is not specified); odd n: the vector loop and its tail.
  std::mt19937 bits(5);
  std::vector<float> in;
  while (in.size() < 100001) {
    const uint32_t pattern = bits();
    float f;
    std::memcpy(&f, &pattern, sizeof f);
    if (!std::isnan(f)) in.push_back(f);
  }
  for (const float tie : {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65520.0f, 0x1p-25f, 3 * 0x1p-25f}) in.push_back(tie);
  std::vector<uint16_t> out(in.size());
  linear_detail::narrow_f16(in.data(), out.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    INFO("value " << in[i]);
    REQUIRE(out[i] == c10::Half(in[i]).x);
  }
}

TEST_CASE("the portable kernel agrees bit for bit with the SIMD one", "[linear][model]") {
  // Both follow the same per-element arithmetic (linear_kernels.h) with fused multiply-adds. On a CPU
  // without AVX2 both calls run the portable kernel and this checks nothing new.
  uint64_t seed = 100;
  for (const at::ScalarType dtype : kDtypes)
    // K: tails of 8- and 16-column blocks, and float32 rows past 4 KiB (one row's tile is narrower there);
    // rows and N: every register tile shape and partial tiles.
    for (const int64_t K : {1, 8, 16, 29, 45, 256, 1037})
      for (const int64_t rows : {1, 2, 3, 4, 6}) {
        const at::Tensor x = random({rows, K}, at::kFloat, seed++);
        const at::Tensor w = random({23, K}, dtype, seed++), b = random({23}, at::kFloat, seed++);
        const at::Tensor simd = linear_detail::small_rows(x, w, b, linear_detail::Kernel::best);
        const at::Tensor portable = linear_detail::small_rows(x, w, b, linear_detail::Kernel::portable);
        INFO("dtype " << dtype << " K " << K << " rows " << rows);
        REQUIRE(at::equal(simd, portable));
      }
}

TEST_CASE("linear runs in inference mode, on every path and thread count", "[linear][model]") {
  // Generation runs in c10::InferenceMode; the pool's threads do not inherit it, and the BLAS path writes
  // (with a bias: addmm_out) into tensors made in it: the threads must enter it too.
  uint64_t seed = 600;
  for (const at::ScalarType dtype : kDtypes)
    for (const int64_t rows : {int64_t{1}, linear_detail::kSmallRows + 1})
      for (const int threads : {1, 2}) {
        ThreadsFor set(threads);
        const at::Tensor x = random({rows, 203}, dtype, seed++);
        const Affine layer = {random({1501, 203}, dtype, seed++), random({1501}, dtype, seed++)};
        const at::Tensor normal = linear(x, layer.weight, layer.bias);
        const c10::InferenceMode inference;
        INFO("dtype " << dtype << ", rows " << rows << ", " << threads << " threads");
        REQUIRE(at::equal(linear(x, layer.weight, layer.bias), normal));
        REQUIRE(at::equal(linear_residual(x, layer, normal), normal + normal));
      }
}

TEST_CASE("linear leaves autograd to at::linear", "[linear][model]") {
  const at::Tensor x = random({3, 5}, at::kFloat, 1), w = random({4, 5}, at::kFloat, 2).requires_grad_();
  const at::Tensor out = kvbench::linear(x, w);
  REQUIRE(out.requires_grad());
  out.sum().backward();
  CHECK(at::allclose(w.grad(), x.sum(0).expand({4, 5})));
  // The fused residual and SwiGLU too, when only the residual (or a weight) records a gradient.
  const at::Tensor residual = random({3, 4}, at::kFloat, 3).requires_grad_();
  const at::Tensor summed = linear_residual(x, {w.detach(), {}}, residual);
  REQUIRE(summed.requires_grad());
  summed.sum().backward();
  CHECK(at::allclose(residual.grad(), at::ones({3, 4})));
  REQUIRE(linear_swiglu(x, {w, {}}, {w.detach(), {}}).requires_grad());
}

TEST_CASE("a packed matrix's row segments each come out as multiplied alone", "[linear][model][batch]") {
  // Segments of at most kSmallRows rows share our kernel's call, larger ones take BLAS by themselves: every
  // segment, small or large, first or between others, bitwise its own product; plain, with a residual, SwiGLU.
  const int64_t K = 64, N = 172;  // stories260K's MLP: rows of N floats are not 64-byte multiples
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const at::Tensor w = random({N, K}, dtype, 21), b = random({N}, dtype, 22), w2 = random({N, K}, dtype, 23);
    const at::Tensor down = random({K, N}, dtype, 24);
    for (const RowSegments& segments : {RowSegments{3, 150, 1, 64, 65}, RowSegments{40, 40, 40}, RowSegments{100, 70},
                                        RowSegments{7}}) {
      const int64_t M = std::accumulate(segments.begin(), segments.end(), int64_t{0});
      const at::Tensor x = random({M, K}, dtype, 25 + M), residual = random({M, K}, dtype, 26 + M);
      const std::vector<at::Tensor> plain = linear(x, {{w, b}, {w2, {}}}, segments);
      const at::Tensor gated = linear_swiglu(x, {w, b}, {w2, {}}, segments);
      const at::Tensor added = linear_residual(gated, {down, {}}, residual, segments);
      for (size_t s = 0, begin = 0; s < segments.size(); begin += segments[s++]) {
        INFO("dtype " << dtype << " segment " << s << " of " << segments.size() << ", " << segments[s] << " rows");
        const at::Tensor rows = x.narrow(0, begin, segments[s]);
        const std::vector<at::Tensor> alone = linear(rows, {{w, b}, {w2, {}}});
        CHECK(at::equal(plain[0].narrow(0, begin, segments[s]), alone[0]));
        CHECK(at::equal(plain[1].narrow(0, begin, segments[s]), alone[1]));
        const at::Tensor gated_alone = linear_swiglu(rows, {w, b}, {w2, {}});
        CHECK(at::equal(gated.narrow(0, begin, segments[s]), gated_alone));
        CHECK(at::equal(added.narrow(0, begin, segments[s]),
                        linear_residual(gated_alone, {down, {}}, residual.narrow(0, begin, segments[s]))));
      }
    }
  }
}
