// The decode attention kernel against Model::attend (ATen's matmul + softmax), for groups with caches of
// different lengths, GQA, attention capture and 16-bit caches.
#include "torch_catch.h"

#include "model/decode_attention.h"
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
