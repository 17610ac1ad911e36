// The decode attention kernel against Model::attend (ATen's matmul + softmax), for groups with caches of
// different lengths, GQA, attention capture and 16-bit caches; its AVX2 products against the portable ones.
#include "torch_catch.h"

#include <cstring>
#include <limits>

#include "model/decode_attention.h"
#include "model/decode_attention_kernels.h"
#include "model_test_util.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

struct Case {
  at::Tensor q;  // [M, H, D]
  std::vector<at::Tensor> keys, values;
};

// Groups of `rollouts[g]` sequences with `lengths[g]` cached entries, H query heads over KV heads.
Case random_case(const std::vector<int64_t>& rollouts, const std::vector<int64_t>& lengths, int64_t H, int64_t KV,
                 int64_t D) {
  Case c;
  int64_t M = 0;
  for (size_t g = 0; g < rollouts.size(); ++g) {
    // Keys/values as the cache holds them: a view of the first N slots of a larger capacity.
    c.keys.push_back(at::randn({rollouts[g], KV, lengths[g] + 5, D}).narrow(2, 0, lengths[g]));
    c.values.push_back(at::randn({rollouts[g], KV, lengths[g] + 5, D}).narrow(2, 0, lengths[g]));
    M += rollouts[g];
  }
  c.q = at::randn({M, H, D});
  return c;
}

}  // namespace

TEST_CASE("decode attention equals Model::attend per group (float32, GQA, probabilities)", "[batch][attention]") {
  KVBENCH_REQUIRE_SHARED("models/tiny-qwen3");
  const Model model = Model::load(shared_dir() / "models/tiny-qwen3");
  at::manual_seed(3);
  const int64_t H = 8, KV = 2, D = 20;  // D not a multiple of 8: the dot product's tail runs too
  const Case c = random_case({1, 3, 2}, {1, 37, 200}, H, KV, D);
  std::vector<DecodeAttentionGroup> groups;
  for (size_t g = 0; g < c.keys.size(); ++g)
    groups.push_back({c.keys[g], c.values[g], at::empty({c.keys[g].size(0), H, 1, c.keys[g].size(2)})});
  const at::Tensor out = decode_attention(c.q, groups);
  int64_t row = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const int64_t R = c.keys[g].size(0);
    at::Tensor probs;
    const at::Tensor expected =
        model.attend(c.q.narrow(0, row, R).unsqueeze(2), c.keys[g], c.values[g], at::Tensor(), &probs);  // [R, 1, H*D]
    CHECK(at::allclose(out.narrow(0, row, R), expected.squeeze(1), 1e-5, 1e-5));
    CHECK(at::allclose(groups[g].probs, probs, 1e-6, 1e-6));
    row += R;
  }
}

TEST_CASE("decode attention over 16-bit caches computes in float32", "[batch][attention]") {
  at::manual_seed(4);
  const int64_t H = 8, KV = 2, D = 16;  // 4 query heads share each widened key and value row
  const Case c = random_case({2, 1}, {9, 50}, H, KV, D);
  for (const at::ScalarType dtype : {at::kBFloat16, at::kHalf}) {
    std::vector<DecodeAttentionGroup> narrow, wide;
    for (size_t g = 0; g < c.keys.size(); ++g) {
      narrow.push_back({c.keys[g].to(dtype), c.values[g].to(dtype), {}});
      // The same (rounded) values in float32: only the output's rounding to 16 bits may differ.
      wide.push_back({c.keys[g].to(dtype).to(at::kFloat), c.values[g].to(dtype).to(at::kFloat), {}});
    }
    const at::Tensor q = c.q.to(dtype);
    const at::Tensor got = decode_attention(q, narrow), want = decode_attention(q.to(at::kFloat), wide).to(dtype);
    CHECK(got.scalar_type() == dtype);
    CHECK(at::equal(got, want));
  }
}

TEST_CASE("the AVX2 attention kernels agree bit for bit with the portable ones", "[batch][attention]") {
  // Both follow the arithmetic of decode_attention_kernels.h (no fused multiply-adds), so a sequence's
  // result does not depend on the CPU's path.
  using namespace attention_detail;
  if (!linear_detail::cpu_has_avx2_kernel()) {
    WARN("this CPU has no AVX2: only the portable kernels run here, nothing to compare");
    return;
  }
  at::manual_seed(5);
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf})
    // N: full and partial blocks of 8 scored entries and of the kScratchRows widened rows; D: tails of 8
    // columns, and more and fewer than the 64 columns summed in registers at once.
    for (const int64_t N : {1, 5, 8, 13, 64, 65, 200})
      for (const int64_t D : {4, 16, 20, 64, 72, 128})
        for (const int64_t G : {1, 7})
          for (const bool ragged : {false, true}) {
            const int64_t stride = D + 3;  // a cache view: entries further apart than D
            const at::Tensor keys = at::randn({N, stride}).to(dtype), values = at::randn({N, stride}).to(dtype);
            const at::Tensor q = at::randn({G, D}), probs = at::rand({G, N}), start = at::randn({G, D});
            const at::Tensor held = at::rand({N}) > 0.3;
            const HeadRows h{q.data_ptr<float>(), keys.data_ptr(), values.data_ptr(),
                             dtype == at::kFloat ? WeightType::f32 : dtype == at::kBFloat16 ? WeightType::bf16 : WeightType::f16,
                             stride, N, G, D, ragged ? held.data_ptr<bool>() : nullptr};
            std::vector<float> scratch(kScratchRows * D), scores_simd(G * N), scores_portable_(G * N);
            scores_avx2(h, 0.37f, scores_simd.data(), scratch.data());
            scores_portable(h, 0.37f, scores_portable_.data(), scratch.data());
            at::Tensor out_simd = start.clone(), out_portable = start.clone();  // the kernels add to what is there
            values_avx2(h, probs.data_ptr<float>(), out_simd.data_ptr<float>(), scratch.data());
            values_portable(h, probs.data_ptr<float>(), out_portable.data_ptr<float>(), scratch.data());
            INFO("dtype " << dtype << " N " << N << " D " << D << " G " << G << " ragged " << ragged);
            REQUIRE(std::memcmp(scores_simd.data(), scores_portable_.data(), G * N * sizeof(float)) == 0);
            REQUIRE(at::equal(out_simd, out_portable));
          }
}

TEST_CASE("the attention softmax: AVX2 and portable agree bit for bit, and both with exp in float64", "[attention]") {
  // softmax_* (decode_attention_kernels.h) exponentiate by a polynomial, not std::exp: each probability is
  // checked against the float64 softmax of the same scores, and the two paths against each other.
  using namespace attention_detail;
  at::manual_seed(6);
  const float none = -std::numeric_limits<float>::infinity();
  for (const int64_t n : {1, 2, 7, 8, 9, 16, 31, 100, 257})
    for (const double spread : {0.1, 5.0, 60.0, 200.0})  // 200: many scores underflow to 0 (below −87.33)
      for (const bool holes : {false, true}) {
        at::Tensor scores = (at::rand({n}, at::kDouble) - 0.5) * spread;
        if (holes) scores.masked_fill_(at::rand({n}).lt(0.3), -std::numeric_limits<double>::infinity());
        const at::Tensor want = at::softmax(scores, 0);  // float64; a row of −inf alone is NaN there
        const bool any_key = scores.gt(-std::numeric_limits<double>::infinity()).any().item<bool>();
        at::Tensor portable = scores.to(at::kFloat).contiguous(), simd = portable.clone();
        softmax_portable(portable.data_ptr<float>(), n);
        INFO("n " << n << " spread " << spread << " holes " << holes);
        if (any_key) {
          CHECK(testing::max_abs_diff(portable, want) < 1e-6);
          CHECK(std::abs(portable.to(at::kDouble).sum().item<double>() - 1.0) < 1e-5);
        } else {
          CHECK(at::equal(portable, at::zeros({n})));
        }
        CHECK(at::equal(portable.eq(0), portable.eq(0).logical_and(want.lt(1e-37).logical_or(want.isnan()))));
        if (linear_detail::cpu_has_avx2_kernel()) {
          softmax_avx2(simd.data_ptr<float>(), n);
          REQUIRE(std::memcmp(simd.data_ptr<float>(), portable.data_ptr<float>(), n * sizeof(float)) == 0);
        }
      }
  std::vector<float> all_unseen(5, none);
  softmax_portable(all_unseen.data(), 5);
  CHECK(all_unseen == std::vector<float>(5, 0.0f));
}
