// The fused RMSNorm and RoPE rotation (model/fused_ops.h) against their formulas written with ATen ops
// (HF's), and against float64.
#include "torch_catch.h"

#include <ATen/Parallel.h>

#include <cmath>

#include "model/fused_ops.h"

using namespace kvbench;

namespace {

at::Tensor random(std::vector<int64_t> shape, at::ScalarType dtype, uint64_t seed, double scale = 1.0) {
  at::manual_seed(seed);
  return (at::randn(shape, at::kDouble) * scale).to(dtype);
}

// HF's rotate_half rotation, op by op: the formula fused_rotate must equal bit for bit.
at::Tensor rotate_by_ops(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const at::Tensor xf = x.to(x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);
  const int64_t half = x.size(-1) / 2;
  const at::Tensor rotated = at::cat({-xf.narrow(-1, half, half), xf.narrow(-1, 0, half)}, -1);
  return (xf * cos + rotated * sin).to(x.scalar_type());
}

double unit_roundoff(at::ScalarType t) {
  switch (t) {
    case at::kBFloat16: return std::ldexp(1.0, -8);
    case at::kHalf: return std::ldexp(1.0, -11);
    case at::kDouble: return std::ldexp(1.0, -53);
    default: return std::ldexp(1.0, -24);
  }
}

}  // namespace

TEST_CASE("fused rotation equals HF's rotate_half formula bit for bit, any dtype and broadcast", "[fused][model]") {
  struct Case {
    std::vector<int64_t> x, table;
  };
  // A decode step's [rows, heads, D] against [rows, 1, D]; rope()'s [B, H, T, D] against [B, 1, T, D];
  // tables of x's own shape; tables broadcast over the leading dim.
  const Case cases[] = {{{5, 14, 64}, {5, 1, 64}}, {{2, 3, 7, 16}, {2, 1, 7, 16}}, {{4, 6, 8}, {4, 6, 8}},
                        {{3, 5, 32}, {1, 5, 32}}, {{1, 1, 2}, {1, 1, 2}}};
  uint64_t seed = 1;
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf, at::kDouble})
    for (const Case& c : cases) {
      const at::Tensor x = random(c.x, dtype, seed++);
      const at::Tensor angles = random(c.table, at::kFloat, seed++, 3.0);
      const at::Tensor cos = angles.cos(), sin = angles.sin();
      const at::Tensor fused = fused_rotate(x, cos, sin);
      INFO("dtype " << dtype << " x " << x.sizes() << " tables " << cos.sizes());
      REQUIRE(fused.defined());
      CHECK(fused.scalar_type() == dtype);
      CHECK(at::equal(fused, rotate_by_ops(x, cos, sin)));
    }
}

TEST_CASE("fused rotation of a non-contiguous x equals the same values made contiguous", "[fused][model]") {
  const at::Tensor x = random({2, 7, 3, 16}, at::kFloat, 11).transpose(1, 2);  // [2, 3, 7, 16], strided
  const at::Tensor angles = random({2, 1, 7, 16}, at::kFloat, 12);
  CHECK(at::equal(fused_rotate(x, angles.cos(), angles.sin()), rotate_by_ops(x, angles.cos(), angles.sin())));
}

TEST_CASE("fused rotation declines tables broadcast in two dims (the caller falls back to ATen)", "[fused][model]") {
  const at::Tensor x = random({2, 3, 4, 8}, at::kFloat, 3), table = random({2, 1, 1, 8}, at::kFloat, 4);
  CHECK_FALSE(fused_rotate(x, table, table).defined());
}

// Every step of the norm is a correctly rounded operation: the sum of D squares (positive terms, any
// order) is within D·u of exact, the mean, the eps addition, the square root and the reciprocal add one
// u each (the root halves the relative error of its argument), x · scale another: (D/2 + 6)·u, then the
// rounding to x's dtype and the product with the weight in that dtype add u_out each (float16 also up to
// half its smallest subnormal, 2^-25, each: products of small values fall below its normal range). Rows of tiny
// values make eps matter (mean(x²) ≈ eps), so leaving it out, or adding it outside the root, fails.
TEST_CASE("fused RMSNorm equals a float64 RMSNorm within its rounding, any dtype, and eps counts", "[fused][model]") {
  const double eps = 1e-6;
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf, at::kDouble})
    for (const int64_t D : {1, 7, 8, 64, 896, 1001})
      for (const double scale : {1.0, 1e-3}) {
        const at::Tensor x = random({3, 2, D}, dtype, static_cast<uint64_t>(D) * 10 + (scale < 1), scale);
        const at::Tensor w = random({D}, dtype, static_cast<uint64_t>(D) + 5);
        const at::Tensor out = fused_rms_norm(x, w, eps);
        REQUIRE(out.scalar_type() == dtype);
        const at::Tensor xd = x.to(at::kDouble), wd = w.to(at::kDouble);
        const at::Tensor normed = xd * at::rsqrt(xd.pow(2).mean(-1, true) + eps);
        const at::Tensor ref = wd * normed;
        const double u = dtype == at::kDouble ? unit_roundoff(at::kDouble) : unit_roundoff(at::kFloat);
        const double u_out = unit_roundoff(dtype);
        const double subnormal = dtype == at::kHalf ? std::ldexp(1.0, -24) : 1e-300;
        const at::Tensor bound = ((D / 2.0 + 6) * u + 2 * u_out) * (wd * normed).abs() + subnormal;
        INFO("dtype " << dtype << " D " << D << " scale " << scale);
        CHECK(((out.to(at::kDouble) - ref).abs() / bound).max().item<double>() <= 1.0);
      }
}

TEST_CASE("fused RMSNorm: a row's result is the same alone, in a batch and at any thread count", "[fused][model]") {
  const at::Tensor x = random({37, 896}, at::kFloat, 21), w = random({896}, at::kFloat, 22);
  const int saved = at::get_num_threads();
  at::set_num_threads(1);
  const at::Tensor batch = fused_rms_norm(x, w, 1e-6);
  at::set_num_threads(2);
  const at::Tensor batch2 = fused_rms_norm(x, w, 1e-6);
  at::set_num_threads(saved);
  CHECK(at::equal(batch, batch2));
  for (const int64_t row : {0, 17, 36}) CHECK(at::equal(fused_rms_norm(x[row], w, 1e-6), batch[row]));
}

TEST_CASE("fused RMSNorm declines a weight of another dtype (the caller falls back to ATen)", "[fused][model]") {
  const at::Tensor x = random({2, 16}, at::kBFloat16, 31), w = random({16}, at::kFloat, 32);
  CHECK_FALSE(fused_rms_norm(x, w, 1e-6).defined());
}
