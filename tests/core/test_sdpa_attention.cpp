// ATen's scaled_dot_product_attention (PyTorch ≥ 2.5, the CUDA path of prefill and the counter-causal pass)
// against kvbench's own attention on the CPU (block_attention), under every mask form Model::attend takes,
// and through whole passes: chunked prefill logits and counter-causal scores of a random model. Under
// libtorch 1.13, which has no SDPA, the cases skip with a message.
#include "torch_catch.h"

#include "model/block_attention.h"
#include "model/random_model.h"
#include "model/sdpa_attention.h"
#include "model_test_util.h"
#include "policies/counter_causal_pass.h"

using namespace kvbench;
using kvbench::testing::max_abs_diff;

namespace {

bool sdpa_built() {
  if (KVBENCH_HAS_SDPA) return true;
  WARN("skipped: libtorch " << TORCH_VERSION << " has no scaled_dot_product_attention with GQA (PyTorch >= 2.5)");
  return false;
}

// Routes every Model::attend without probabilities through SDPA while alive, also on the CPU.
struct SdpaOnCpu {
  SdpaOnCpu() { set_sdpa_on_cpu(true); }
  ~SdpaOnCpu() { set_sdpa_on_cpu(false); }
};

}  // namespace

TEST_CASE("SDPA equals kvbench's attention under every mask form (float32, GQA)", "[attention][sdpa]") {
  if (!sdpa_built()) return;
  const int64_t B = 2, H = 6, KV = 2, T = 150, N = 187, D = 20;
  at::manual_seed(11);
  const at::Tensor q = at::randn({B, T, H, D}).transpose(1, 2);  // as Model::attend gets it
  const at::Tensor k = at::randn({B, KV, N + 3, D}).narrow(2, 0, N), v = at::randn({B, KV, N + 3, D}).narrow(2, 0, N);
  const at::Tensor causal = at::arange(N).unsqueeze(0) <= (at::arange(T) + (N - T)).unsqueeze(1);
  at::Tensor allowed;
  SECTION("no mask") {}
  SECTION("causal, shared by the sequences") { allowed = causal; }
  SECTION("the counter-causal mask: each row sees later keys only, the last rows none") {
    allowed = at::arange(N).unsqueeze(0) > (at::arange(T) + 60).unsqueeze(1);
  }
  SECTION("per sequence, with rows that see nothing") {
    allowed = at::rand({B, T, N}).lt(0.3);
    allowed[1].narrow(0, 0, 70).fill_(false);
  }
  SECTION("per KV head (ragged cache padding)") {
    allowed = causal.unsqueeze(0).unsqueeze(0).logical_and(at::rand({B, KV, 1, N}).gt(0.2)).contiguous();
    allowed[1][0].narrow(0, 10, 5).fill_(false);
  }
  const at::Tensor ours = block_attention(q, k, v, allowed), fused = sdpa_attention(q, k, v, allowed);
  REQUIRE(fused.sizes() == ours.sizes());
  CHECK(fused.isfinite().all().item<bool>());
  // Both sum the same products in float32, in other orders: a few ulps of values of order 1.
  CHECK(max_abs_diff(fused, ours) < 2e-6);
}

TEST_CASE("SDPA through whole passes: chunked prefill logits and counter-causal scores", "[attention][sdpa]") {
  if (!sdpa_built()) return;
  // Qwen3 (q/k-norm) with GQA: 4 query heads over 2 KV heads.
  const Model model = random_model(testing::tiny_model_config(ModelFamily::Qwen3, 64, 4, 2, 300), 5, at::kCPU, at::kFloat);
  at::manual_seed(7);
  const auto ids_tensor = at::randint(3, model.config().vocab_size, {90}, at::kLong);
  const std::vector<int64_t> ids(ids_tensor.data_ptr<int64_t>(), ids_tensor.data_ptr<int64_t>() + 90);
  const at::Tensor logits = testing::chunked_logits(model, ids, 32);
  KvCache cache(cache_shape(model.config()), 1, model.options(), true);
  model.forward(testing::ids_tensor(ids), testing::position_range(0, 90), cache);
  const at::Tensor input = model.embed(cache.token_ids());
  const at::Tensor scores = counter_causal_scores(model, cache, input, 0, true, 1);
  const SdpaOnCpu sdpa;
  // Logits of order 10 after the layers' float32 products: 1e-4 is a few dozen ulps.
  CHECK(max_abs_diff(testing::chunked_logits(model, ids, 32), logits) < 1e-4);
  CHECK(max_abs_diff(counter_causal_scores(model, cache, input, 0, true, 1), scores) < 1e-4);
}
