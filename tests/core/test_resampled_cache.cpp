// The O(n) cache fill of `kvbench bench refresh` (bench/resampled_cache.h) against independent references: the
// layout of a cache the model's own causal forward fills with n tokens, every entry a copy of a source
// entry with its key rotated by a from-scratch RoPE (float64, written here), reproducible from the seed,
// and scored by the counter-causal passes as a prefilled cache is.
#include "torch_catch.h"

#include <cmath>
#include <set>

#include "bench/resampled_cache.h"
#include "model/random_model.h"
#include "model_test_util.h"
#include "policies/policy.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

Model tiny_model() {
  return random_model(tiny_model_config(ModelFamily::Llama, 32, 4, 2, 50), 11, at::kCPU, at::kFloat);
}

// A cache of n tokens the way a prefill builds it: one forward over ids 3, 4, ... at positions 0..n−1.
KvCache prefilled_cache(const Model& model, int64_t n, bool keep_last_layer_input = true) {
  KvCache cache(cache_shape(model.config()), 1, model.options(), keep_last_layer_input);
  const at::Tensor ids = at::arange(n, at::kLong).remainder(model.config().vocab_size - 3).add(3).unsqueeze(0);
  model.forward(ids, position_range(0, n), cache);
  return cache;
}

void require_same_layout(const at::Tensor& filled, const at::Tensor& prefilled) {
  CHECK(filled.sizes() == prefilled.sizes());
  CHECK(filled.strides() == prefilled.strides());
  CHECK(filled.scalar_type() == prefilled.scalar_type());
}

// HF Llama RoPE (rotate_half: dimension d pairs with d + D/2) of one key [D] by `delta` positions, float64.
at::Tensor rotated(const at::Tensor& key, int64_t delta, double theta) {
  const int64_t D = key.size(0), half = D / 2;
  const at::Tensor k = key.to(at::kDouble);
  at::Tensor out = at::empty({D}, at::kDouble);
  for (int64_t d = 0; d < half; ++d) {
    const double angle = static_cast<double>(delta) * std::pow(theta, -2.0 * d / D);
    const double x1 = k[d].item<double>(), x2 = k[d + half].item<double>();
    out[d] = x1 * std::cos(angle) - x2 * std::sin(angle);
    out[d + half] = x2 * std::cos(angle) + x1 * std::sin(angle);
  }
  return out;
}

// The source slot whose H^(L-1) row equals slot i's (rows of a real prefill are distinct); -1 if none.
int64_t source_slot(const KvCache& source, const KvCache& filled, int64_t i) {
  const at::Tensor matches = source.last_layer_input()[0].eq(filled.last_layer_input()[0][i]).all(1).nonzero();
  return matches.size(0) == 1 ? matches[0][0].item<int64_t>() : -1;
}

}  // namespace

TEST_CASE("resampled cache: the layout and positions of a prefilled cache", "[bench][resampled-cache]") {
  const Model model = tiny_model();
  const KvCache source = prefilled_cache(model, 40);
  for (int64_t n : {96, 200, 512}) {
    INFO("n = " << n);
    const KvCache filled = resampled_cache(model, source, n, 5);
    const KvCache prefilled = prefilled_cache(model, n);
    REQUIRE(filled.size() == n);
    for (int64_t l = 0; l < model.config().num_layers; ++l) {
      require_same_layout(filled.keys(l), prefilled.keys(l));
      require_same_layout(filled.values(l), prefilled.values(l));
    }
    require_same_layout(filled.token_ids(), prefilled.token_ids());
    require_same_layout(filled.last_layer_input(), prefilled.last_layer_input());
    CHECK(filled.positions().equal(prefilled.positions()));
  }
}

TEST_CASE("resampled cache: every entry a source entry, its key rotated to its new position", "[bench][resampled-cache]") {
  const Model model = tiny_model();
  const KvCache source = prefilled_cache(model, 40);
  const int64_t n = 150;
  const KvCache filled = resampled_cache(model, source, n, 5);
  std::set<int64_t> drawn;
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = source_slot(source, filled, i);
    REQUIRE(j >= 0);
    drawn.insert(j);
    CHECK(filled.token_ids()[0][i].item<int64_t>() == source.token_ids()[0][j].item<int64_t>());
    for (int64_t l = 0; l < model.config().num_layers; ++l)
      for (int64_t h = 0; h < model.config().num_kv_heads; ++h) {
        CHECK(filled.values(l)[0][h][i].equal(source.values(l)[0][h][j]));
        const at::Tensor want = rotated(source.keys(l)[0][h][j], i - j, model.config().rope_theta);
        worst = std::max(worst, max_abs_diff(filled.keys(l)[0][h][i], want));
      }
  }
  CHECK(worst < 1e-5);
  CHECK(drawn.size() > 30);  // with replacement, uniformly: 150 draws of 40 miss about 1 slot
}

TEST_CASE("resampled cache: reproducible from the seed", "[bench][resampled-cache]") {
  const Model model = tiny_model();
  const KvCache source = prefilled_cache(model, 40);
  const KvCache filled = resampled_cache(model, source, 120, 5);
  const KvCache again = resampled_cache(model, source, 120, 5);
  const KvCache other = resampled_cache(model, source, 120, 6);
  for (int64_t l = 0; l < model.config().num_layers; ++l) {
    CHECK(filled.keys(l).equal(again.keys(l)));
    CHECK(filled.values(l).equal(again.values(l)));
  }
  CHECK(filled.token_ids().equal(again.token_ids()));
  CHECK(filled.last_layer_input().equal(again.last_layer_input()));
  CHECK_FALSE(filled.last_layer_input().equal(other.last_layer_input()));
}

TEST_CASE("resampled cache: counter-causal passes score it like a prefilled cache", "[bench][resampled-cache]") {
  const Model model = tiny_model();
  const int64_t n = 160;
  const KvCache filled = resampled_cache(model, prefilled_cache(model, 40), n, 5);
  const KvCache prefilled = prefilled_cache(model, n);
  CacheBudget budget;
  budget.J = n / 2;
  for (const char* name : {"counter-causal", "counter-causal-fast"}) {
    INFO(name);
    const auto policy = make_policy(name);
    const at::Tensor on_filled = policy->score({model, filled, budget});
    CHECK(on_filled.sizes() == policy->score({model, prefilled, budget}).sizes());
    CHECK(on_filled.isfinite().all().item<bool>());
  }
}

TEST_CASE("resampled cache: bad sizes and sources are refused", "[bench][resampled-cache]") {
  const Model model = tiny_model();
  const KvCache source = prefilled_cache(model, 40);
  CHECK_THROWS_WITH(resampled_cache(model, source, 0, 5), Catch::Contains("n must be positive"));
  const KvCache empty(cache_shape(model.config()), 1, model.options(), true);
  CHECK_THROWS_WITH(resampled_cache(model, empty, 10, 5), Catch::Contains("non-empty token-level cache"));
  CHECK_THROWS_WITH(resampled_cache(model, prefilled_cache(model, 40, false), 10, 5), Catch::Contains("keeps H^(L-1)"));
}
