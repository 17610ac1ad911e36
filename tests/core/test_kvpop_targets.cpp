// KVpop targets and losses against brute force: future attention mass from the engine's own S×S
// attention probabilities (explicit loops), boundary pairs by sorting every step's candidates,
// the pairwise loss by hand; the scorer file round-trips and un-rotates keys.
#include "torch_catch.h"

#include <ATen/core/grad_mode.h>

#include <cmath>
#include <limits>
#include <random>

#include "model/random_model.h"
#include "model_test_util.h"
#include "policies/kvpop_scorer.h"
#include "policies/kvpop_targets.h"
#include "engine/generate.h"
#include "engine/refresh.h"
#include "policies/future_oracle.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

// Random weights with q/k scaled up so attention is far from uniform.
Model peaked_model(at::ScalarType dtype) {
  const ModelConfig c = tiny_model_config(ModelFamily::Llama, 16, 4, 2, 19);
  ModelWeights w = random_model(c, 3, at::kCPU, dtype).weights();
  for (auto& l : w.layers) {
    l.q_proj = l.q_proj * 40;
    l.k_proj = l.k_proj * 40;
  }
  return Model::from_weights(c, w);
}

// m_t from dense probabilities [H, S, S] with explicit loops, as the definition reads.
double brute_force_target(const at::Tensor& probs, int64_t kv, int64_t t, const FutureMassSpec& spec, int64_t G) {
  const int64_t S = probs.size(1);
  const int64_t count = S - t - spec.window;
  if (count <= 0) return std::nan("");
  const double gamma = spec.gamma.empty() ? 1.0 : spec.gamma.size() == 1 ? spec.gamma[0] : spec.gamma[kv];
  double sum = 0.0;
  for (int64_t g = 0; g < G; ++g)
    for (int64_t q = t + spec.window; q < S; ++q)
      sum += std::pow(gamma, static_cast<double>((q - t) / spec.decay_period)) * probs[kv * G + g][q][t].item<double>();
  return std::log(sum / G / static_cast<double>(count) + spec.epsilon);
}

}  // namespace

TEST_CASE("future-mass targets equal a brute-force S×S computation", "[kvpop][targets]") {
  const Model model = peaked_model(at::kDouble);
  std::mt19937 rng(5);
  std::vector<int64_t> ids;
  for (int i = 0; i < 37; ++i) ids.push_back(static_cast<int64_t>(rng() % 19));
  const at::Tensor tokens = ids_tensor(ids), positions = position_range(0, ids.size());
  std::vector<QueryKeyValue> layers;
  model.forward_sequence(tokens, positions, &layers);
  KvCache cache(cache_shape(model.config()), 1, model.options(), false);
  ForwardOptions options;
  options.attention = AttentionCapture::AllLayers;
  const ForwardResult engine = model.forward(tokens, positions, cache, options);  // dense [1, H, S, S]

  FutureMassSpec decayed{5, {0.9, 0.6}, 4, 1e-6, 8};  // blocks of 8 do not divide S = 37
  FutureMassSpec plain{0, {}, 1, 1e-3, 64};          // w = 0: a token's own query counts
  for (const FutureMassSpec& spec : {decayed, plain}) {
    for (int64_t l = 0; l < 2; ++l) {
      const at::Tensor targets = future_mass_targets(layers[l].q, layers[l].k, spec)[0];  // [KV, S]
      REQUIRE(targets.sizes() == at::IntArrayRef({2, 37}));
      for (int64_t kv = 0; kv < 2; ++kv)
        for (int64_t t = 0; t < 37; ++t) {
          INFO("layer " << l << " kv " << kv << " t " << t << " w " << spec.window);
          const double expected = brute_force_target(engine.attention[l][0], kv, t, spec, 2);
          const double got = targets[kv][t].item<double>();
          if (std::isnan(expected)) CHECK(std::isnan(got));
          else CHECK(got == Approx(expected).epsilon(1e-9).margin(1e-12));
        }
    }
  }
  // The targets really vary (the peaked model is not uniform) and the decay matters.
  const at::Tensor undecayed = future_mass_targets(layers[1].q, layers[1].k, {5, {}, 4, 1e-6, 8})[0];
  const at::Tensor decayed_targets = future_mass_targets(layers[1].q, layers[1].k, decayed)[0];
  CHECK(undecayed.narrow(1, 0, 20).std().item<double>() > 0.3);
  CHECK((undecayed - decayed_targets).narrow(1, 0, 20).abs().min().item<double>() > 0.0);
}

TEST_CASE("causal log-sum-exp in blocks equals the dense one", "[kvpop][targets]") {
  const at::Tensor q = at::randn({1, 4, 13, 4}, at::kDouble), k = at::randn({1, 2, 13, 4}, at::kDouble);
  const at::Tensor lse = causal_logsumexp(q, k, 5);
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t t = 0; t < 13; ++t) {
      double sum = 0.0;
      for (int64_t j = 0; j <= t; ++j) sum += std::exp((q[0][h][t] * k[0][h / 2][j]).sum().item<double>() / 2.0);
      CHECK(lse[0][h][t].item<double>() == Approx(std::log(sum)).epsilon(1e-12));
    }
}

TEST_CASE("boundary pairs equal sorting every step's candidates", "[kvpop][targets]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> value(0, 9);  // coarse values: ties happen and go to the older token
  std::vector<double> y(40);
  for (auto& v : y) v = value(rng);
  const int64_t s = 2, w = 3, k = 5;
  const BoundaryPairs pairs = boundary_pairs(at::tensor(y, at::kDouble), s, w, k);
  size_t i = 0;
  for (int64_t e = s; e + w + 1 <= 40; ++e) {
    std::vector<int64_t> pool;
    for (int64_t t = s; t < e; ++t) pool.push_back(t);
    if (static_cast<int64_t>(pool.size()) < k) continue;
    std::sort(pool.begin(), pool.end(), [&](int64_t a, int64_t b) { return y[a] != y[b] ? y[a] > y[b] : a < b; });
    REQUIRE(i < pairs.leaving.size());
    CHECK(pairs.leaving[i] == e);
    CHECK(pairs.boundary[i] == pool[k - 1]);
    CHECK(pairs.label[i] == (y[e] > y[pool[k - 1]] ? 1.0f : 0.0f));
    ++i;
  }
  CHECK(i == pairs.leaving.size());
  CHECK(i == 40 - w - s - k);
}

TEST_CASE("pairwise logistic loss by hand", "[kvpop][targets]") {
  const at::Tensor fe = at::tensor({2.0, 2.0}, at::kDouble), fb = at::tensor({1.0, 1.0}, at::kDouble);
  const at::Tensor label = at::tensor({1.0, 0.0}, at::kDouble);
  const double expected = 0.5 * (std::log1p(std::exp(-2.0)) + std::log1p(std::exp(2.0)));  // τ = 0.5
  CHECK(pairwise_logistic_loss(fe, fb, label, 0.5).item<double>() == Approx(expected).epsilon(1e-12));
}

TEST_CASE("scorer features un-rotate keys, scorer files round-trip", "[kvpop][scorer]") {
  const Model model = peaked_model(at::kFloat);
  const at::Tensor k0 = at::randn({1, 2, 6, 4}), v = at::randn({1, 2, 6, 4});
  const at::Tensor positions = at::tensor({3, 9, 10, 17, 40, 41}, at::kLong).unsqueeze(0);
  const at::Tensor features = KvpopScorer::features(model, model.rope(k0, positions), v, positions);
  CHECK(max_abs_diff(features.narrow(-1, 0, 4), k0) < 1e-5);
  CHECK(at::equal(features.narrow(-1, 4, 4), v));
  // After per-head compaction each KV head has its own positions [B, KV, N].
  const at::Tensor head_positions = at::stack({positions[0], positions[0].flip(0)}).unsqueeze(0);
  const at::Tensor rotated = at::cat({model.rope(k0.narrow(1, 0, 1), positions),
                                      model.rope(k0.narrow(1, 1, 1), positions.flip(1))}, 1);
  CHECK(max_abs_diff(KvpopScorer::features(model, rotated, v, head_positions).narrow(-1, 0, 4), k0) < 1e-5);

  const auto file = kvbench::testing::scratch_path("scorer");
  for (const auto kind : {ScorerKind::Linear, ScorerKind::Mlp}) {
    const KvpopScorer scorer = KvpopScorer::create({kind, 2, 2, 4, 5}, at::randn({2, 2, 8}), at::rand({2, 2, 8}) + 0.5, 1);
    scorer.save(file, {{"k", "64"}});
    const KvpopScorer loaded = KvpopScorer::load(file);
    CHECK(loaded.metadata().at("k") == "64");
    CHECK(loaded.shape().kind == kind);
    CHECK(loaded.shape().hidden == (kind == ScorerKind::Mlp ? 5 : 32));
    for (int64_t l = 0; l < 2; ++l) CHECK(at::equal(loaded.score(l, features), scorer.score(l, features)));
    CHECK(scorer.score(1, features).sizes() == at::IntArrayRef({1, 2, 6}));
  }
  std::filesystem::remove(file);
}

TEST_CASE("future-oracle keeps sinks, the window and each head's top-k by its target table", "[kvpop][oracle]") {
  const Model model = peaked_model(at::kFloat);
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 30; ++i) ids.push_back((i * 7) % 19);
  KvCache cache(cache_shape(model.config()), 1, model.options(), false);
  model.forward(ids_tensor(ids), position_range(0, 30), cache);
  at::manual_seed(3);
  at::Tensor targets = at::randn({2, 2, 25});  // the table ends before the cache does: positions 25..29 are "unknown"
  targets[0][1][7] = std::nan("");             // no future known either
  const auto policy = future_oracle_policy(targets);
  CacheBudget budget;
  budget.J = 12;
  budget.sinks = 2;
  budget.recent = 3;
  refresh(model, cache, *policy, budget);
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t h = 0; h < 2; ++h) {
      // Candidates 2..26; unknown (≥ 25, NaN) rank first, then the 7 best known targets → 7 in all.
      std::vector<int64_t> candidates;
      for (int64_t t = 2; t < 27; ++t) candidates.push_back(t);
      auto rank = [&](int64_t t) {
        const double v = t >= 25 ? INFINITY : targets[l][h][t].item<double>();
        return std::isnan(v) ? INFINITY : v;
      };
      std::stable_sort(candidates.begin(), candidates.end(), [&](int64_t a, int64_t b) { return rank(a) > rank(b); });
      std::vector<int64_t> expected = {0, 1, 27, 28, 29};
      expected.insert(expected.end(), candidates.begin(), candidates.begin() + 7);
      std::sort(expected.begin(), expected.end());
      const at::Tensor kept = cache.head_positions(l)[0][h].contiguous();
      INFO("layer " << l << " head " << h);
      CHECK(std::vector<int64_t>(kept.data_ptr<int64_t>(), kept.data_ptr<int64_t>() + kept.numel()) == expected);
    }
}

TEST_CASE("the registry's future-oracle learns the future from a full-cache run of the same prompt", "[kvpop][oracle]") {
  const Model model = peaked_model(at::kFloat);
  GenerationSettings settings;
  settings.budget.J = 12;
  settings.budget.h = 4;
  settings.budget.sinks = 2;
  settings.budget.recent = 3;
  settings.max_new_tokens = 12;
  // By hand: the full cache's continuation, its targets, then the oracle over that fixed table.
  auto by_hand = [&](const std::vector<int64_t>& prompt) {
    GenerationSettings full_settings = settings;
    full_settings.budget.h = 1 << 30;
    const GenerationResult future = generate(model, *make_policy("full"), prompt, full_settings);
    std::vector<int64_t> ids = prompt;
    ids.insert(ids.end(), future.rollouts[0].generated.begin(), future.rollouts[0].generated.end());
    FutureMassSpec spec;
    spec.window = settings.budget.recent;
    return generate(model, *future_oracle_policy(future_oracle_targets(model, ids, spec)), prompt, settings);
  };
  const auto oracle = make_policy("future-oracle");
  for (const int64_t stride : {5, 7}) {  // one policy instance, two prompts: each generation measures its own future
    std::vector<int64_t> prompt;
    for (int64_t i = 0; i < 30; ++i) prompt.push_back((i * stride + 3) % 19);
    const GenerationResult expected = by_hand(prompt);
    for (const bool shadow : {false, true}) {  // the shadow records; the look-ahead and kept sets stay the same
      INFO("stride " << stride << ", shadow " << shadow);
      GenerationSettings run_settings = settings;
      run_settings.shadow_full = shadow;
      const GenerationResult actual = generate(model, *oracle, prompt, run_settings);
      CHECK(actual.rollouts[0].generated == expected.rollouts[0].generated);
      REQUIRE(actual.refreshes.size() == expected.refreshes.size());
      for (size_t r = 0; r < actual.refreshes.size(); ++r)
        CHECK(at::equal(actual.refreshes[r].kept_positions, expected.refreshes[r].kept_positions));
    }
  }
}

TEST_CASE("future-oracle's look-ahead: the generation's settings, never refreshed, no shadow twin", "[kvpop][oracle]") {
  GenerationSettings settings;
  settings.budget.J = 12;
  settings.budget.h = 4;
  settings.budget.recent = 3;
  settings.sampling.temperature = 0.7;
  settings.sampling.seed = 9;
  settings.max_new_tokens = 17;
  settings.rollouts = 2;
  settings.eos_ids = {5};
  settings.shadow_full = true;
  const GenerationSettings look_ahead = look_ahead_settings(settings);
  CHECK_FALSE(look_ahead.shadow_full);
  CHECK(look_ahead.budget.h >= std::numeric_limits<int32_t>::max());
  CHECK(look_ahead.budget.J == 12);
  CHECK(look_ahead.budget.recent == 3);
  CHECK(look_ahead.sampling.temperature == 0.7);
  CHECK(look_ahead.sampling.seed == 9);
  CHECK(look_ahead.max_new_tokens == 17);
  CHECK(look_ahead.rollouts == 2);
  CHECK(look_ahead.eos_ids == std::vector<int64_t>{5});
}
