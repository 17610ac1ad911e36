// block_attention (model/block_attention.h) against attention computed head by head in float64 from the
// formula, over every mask form Model::attend takes; and its contract that a sequence's result does not
// depend on the thread count or on the sequences beside it.
#include "torch_catch.h"

#include <cmath>
#include <limits>

#include "model/block_attention.h"
#include "model_test_util.h"

using namespace kvbench;
using kvbench::testing::ThreadsFor;

namespace {

struct Case {
  at::Tensor q, k, v, allowed;  // q [B, H, T, D], k/v [B, KV, N, D]
};

// Keys/values as a cache holds them: the first N slots of a larger capacity.
Case random_case(int64_t B, int64_t H, int64_t KV, int64_t T, int64_t N, int64_t D, uint64_t seed) {
  at::manual_seed(seed);
  return {at::randn({B, T, H, D}).transpose(1, 2),  // as Model::attend gets it: a transposed view
          at::randn({B, KV, N + 3, D}).narrow(2, 0, N), at::randn({B, KV, N + 3, D}).narrow(2, 0, N), {}};
}

// New row t (after N − T cached entries) sees every cached entry and the new rows up to itself.
at::Tensor causal(int64_t T, int64_t N) {
  return at::arange(N).unsqueeze(0) <= (at::arange(T) + (N - T)).unsqueeze(1);
}

// The formula, one head at a time in float64: softmax(q kᵀ / √D, masked) v; a row that sees no key is 0.
// Returns the output [B, T, H * D] and the probabilities [B, H, T, N].
std::pair<at::Tensor, at::Tensor> reference(const Case& c) {
  const int64_t B = c.q.size(0), H = c.q.size(1), T = c.q.size(2), D = c.q.size(3), KV = c.k.size(1), N = c.k.size(2);
  at::Tensor out = at::zeros({B, T, H, D}, at::kDouble), probs = at::zeros({B, H, T, N}, at::kDouble);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t kv = h / (H / KV);
      const int64_t form = c.allowed.defined() ? c.allowed.dim() : 0;  // 0: no mask
      at::Tensor visible = at::ones({T, N}, at::kBool);
      if (form == 4) visible = c.allowed[b][kv];
      if (form == 3) visible = c.allowed[c.allowed.size(0) == 1 ? 0 : b];
      if (form == 2) visible = c.allowed;
      for (int64_t t = 0; t < T; ++t) {
        if (!visible[t].any().item<bool>()) continue;
        const at::Tensor keys = c.k[b][kv].to(at::kDouble), query = c.q[b][h][t].to(at::kDouble);
        const at::Tensor scores = at::mv(keys, query) / std::sqrt(double(D));
        const double minus_inf = -std::numeric_limits<double>::infinity();
        const at::Tensor p = at::softmax(scores.masked_fill(visible[t].logical_not(), minus_inf), 0);
        probs[b][h][t].copy_(p);
        out[b][t][h].copy_(at::mv(c.v[b][kv].to(at::kDouble).t(), p));
      }
    }
  return {out.view({B, T, H * D}), probs};
}

void check_against_reference(const Case& c, double tolerance) {
  at::Tensor probs;
  const at::Tensor got = block_attention(c.q, c.k, c.v, c.allowed, &probs);
  const auto [want, want_probs] = reference(c);
  CHECK(got.scalar_type() == c.v.scalar_type());
  CHECK(testing::max_abs_diff(got, want) < tolerance);
  CHECK(testing::max_abs_diff(probs, want_probs) < tolerance);
  CHECK(at::equal(block_attention(c.q, c.k, c.v, c.allowed), got));  // the same without capturing probabilities
}

}  // namespace

TEST_CASE("block attention equals the formula under every mask form (float32, GQA)", "[attention]") {
  // T = 150 rows: several blocks and a short last one; N − T = 37 cached entries; D not a multiple of 8.
  const int64_t B = 2, H = 6, KV = 2, T = 150, N = 187, D = 20;
  Case c = random_case(B, H, KV, T, N, D, 1);
  SECTION("no mask") { check_against_reference(c, 1e-5); }
  SECTION("causal, shared by the sequences") {
    c.allowed = causal(T, N);
    check_against_reference(c, 1e-5);
  }
  SECTION("the mirror of causal: each row sees the keys after its own (the counter-causal pass)") {
    c.allowed = at::arange(N).unsqueeze(0) > (at::arange(T) + 60).unsqueeze(1);  // the last rows see none
    check_against_reference(c, 1e-5);
  }
  SECTION("per sequence, with rows that see nothing") {
    c.allowed = at::rand({B, T, N}).lt(0.3);
    c.allowed[0].narrow(0, 64, 3).fill_(false);
    c.allowed[1].narrow(0, 0, 70).fill_(false);  // a whole block of rows without a key
    check_against_reference(c, 1e-5);
  }
  SECTION("per KV head (ragged cache padding), with holes and rows that see nothing") {
    c.allowed = causal(T, N).unsqueeze(0).unsqueeze(0).logical_and(at::rand({B, KV, 1, N}).gt(0.2)).contiguous();
    c.allowed[1][0].narrow(0, 10, 5).fill_(false);
    check_against_reference(c, 1e-5);
  }
}

TEST_CASE("block attention on the parallel path and in 16-bit and float64", "[attention]") {
  SECTION("enough work for the pool: float32 with a causal mask") {
    Case c = random_case(1, 8, 2, 300, 340, 64, 2);
    c.allowed = causal(300, 340);
    check_against_reference(c, 1e-5);
  }
  SECTION("bfloat16: products in bfloat16, softmax in float32") {
    Case c = random_case(1, 4, 4, 70, 90, 16, 3);
    c.allowed = causal(70, 90);
    c = {c.q.to(at::kBFloat16), c.k.to(at::kBFloat16), c.v.to(at::kBFloat16), c.allowed};
    check_against_reference(c, 0.05);
  }
  SECTION("float64 stays float64") {
    Case c = random_case(1, 4, 1, 70, 70, 8, 4);
    c.allowed = causal(70, 70);
    c = {c.q.to(at::kDouble), c.k.to(at::kDouble), c.v.to(at::kDouble), c.allowed};
    check_against_reference(c, 1e-12);
  }
}

TEST_CASE("a sequence's block attention does not depend on the thread count or the sequences beside it",
          "[attention][batch]") {
  // Parallel (well over the pool's threshold), and a cache long enough that a block holds fewer rows than
  // the most (its scores would not fit the block budget): the blocks follow T, N and G alone.
  const int64_t B = 3, H = 8, KV = 2, T = 200, N = 5000, D = 64;
  Case c = random_case(B, H, KV, T, N, D, 5);
  c.allowed = causal(T, N).unsqueeze(0).expand({B, T, N}).logical_and(at::rand({B, 1, N}).gt(0.1)).contiguous();
  at::Tensor probs;
  const at::Tensor together = block_attention(c.q, c.k, c.v, c.allowed, &probs);
  for (const int threads : {1, 2}) {
    const ThreadsFor set(threads);
    for (int64_t b = 0; b < B; ++b) {
      INFO(threads << " threads, sequence " << b);
      at::Tensor alone_probs;
      const at::Tensor alone = block_attention(c.q.narrow(0, b, 1), c.k.narrow(0, b, 1), c.v.narrow(0, b, 1),
                                               c.allowed.narrow(0, b, 1), &alone_probs);
      CHECK(at::equal(alone, together.narrow(0, b, 1)));
      CHECK(at::equal(alone_probs, probs.narrow(0, b, 1)));
    }
  }
}

TEST_CASE("small blocks attend row by row: each sequence's result alone, at any thread count", "[attention][batch]") {
  // A tiny model's blocks (D = 8, ~100 keys) take the row kernel; the counter-causal mask, a per-sequence
  // random one and a per-KV-head one, in float32 and bfloat16, against the formula and against each
  // sequence alone.
  const int64_t B = 3, H = 8, KV = 4, T = 90, N = 130, D = 8;
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16})
    for (int form = 0; form < 3; ++form) {
      Case c = random_case(B, H, KV, T, N, D, 7 + form);
      if (form == 0) c.allowed = at::arange(N).unsqueeze(0) > (at::arange(T) + 30).unsqueeze(1);
      if (form == 1) c.allowed = at::rand({B, T, N}).lt(0.4);
      if (form == 2) c.allowed = causal(T, N).expand({B, KV, T, N}).logical_and(at::rand({B, KV, 1, N}).gt(0.2)).contiguous();
      c = {c.q.to(dtype), c.k.to(dtype), c.v.to(dtype), c.allowed};
      INFO("dtype " << dtype << " mask form " << form);
      check_against_reference(c, dtype == at::kFloat ? 1e-5 : 0.05);
      at::Tensor probs;
      const at::Tensor together = block_attention(c.q, c.k, c.v, c.allowed, &probs);
      for (const int threads : {1, 2}) {
        const ThreadsFor set(threads);
        for (int64_t b = 0; b < B; ++b) {
          at::Tensor alone_probs;
          const at::Tensor mask = c.allowed.dim() == 2 ? c.allowed : c.allowed.narrow(0, b, 1);
          const at::Tensor alone = block_attention(c.q.narrow(0, b, 1), c.k.narrow(0, b, 1), c.v.narrow(0, b, 1), mask,
                                                   &alone_probs);
          CHECK(at::equal(alone, together.narrow(0, b, 1)));
          CHECK(at::equal(alone_probs, probs.narrow(0, b, 1)));
        }
      }
    }
}
