// Attention lost under `--shadow full` (engine/shadow.h) against a from-scratch recomputation: one causal
// pass over each rollout's fed tokens (Model::forward_sequence: no cache, no Model::attend), softmax
// probabilities written here in float64, and the entries each refresh left out read from its record —
// [0, processed) minus its kept positions, per layer and KV head for per-head policies. A refresh's window
// is the positions [processed, next refresh's processed) that the rollout fed.
#include "torch_catch.h"

#include <cmath>
#include <random>
#include <set>

#include "engine/generate.h"
#include "model/random_model.h"
#include "model_test_util.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

// Per layer [H, S, S] float64: causal attention probabilities of every position of `ids`.
std::vector<at::Tensor> reference_attention(const Model& model, const std::vector<int64_t>& ids) {
  const auto S = static_cast<int64_t>(ids.size());
  std::vector<QueryKeyValue> layers;
  model.forward_sequence(ids_tensor(ids), position_range(0, S), &layers);
  const at::Tensor future = at::ones({S, S}, at::kBool).triu(1);
  std::vector<at::Tensor> probs;
  for (const auto& qkv : layers) {
    const at::Tensor q = qkv.q[0].to(at::kDouble);  // [H, S, D]
    const int64_t group = q.size(0) / qkv.k.size(1);
    const at::Tensor k = qkv.k[0].to(at::kDouble).repeat_interleave(group, 0);
    const at::Tensor scores = at::matmul(q, k.transpose(1, 2)) / std::sqrt(static_cast<double>(q.size(2)));
    probs.push_back(at::softmax(scores.masked_fill(future, -INFINITY), -1));
  }
  return probs;
}

// The positions before `processed` that (layer, KV head) of rollout b did not keep at this refresh.
std::vector<int64_t> left_out(const RefreshRecord& record, int64_t b, int64_t layer, int64_t kv_head) {
  at::Tensor kept = record.kept_positions[std::min(b, record.kept_positions.size(0) - 1)];
  if (kept.dim() == 3) kept = kept[layer][kv_head];
  std::set<int64_t> held;
  for (int64_t i = 0; i < kept.size(0); ++i) held.insert(kept[i].item<int64_t>());
  std::vector<int64_t> out;
  for (int64_t p = 0; p < record.processed; ++p)
    if (!held.count(p)) out.push_back(p);
  return out;
}

// Largest difference between the recorded and the recomputed lost attention, every window of rollout b.
double worst_difference(const Model& model, const GenerationResult& result, int64_t b) {
  std::vector<int64_t> fed = result.prompt;
  const auto& generated = result.rollouts[b].generated;
  fed.insert(fed.end(), generated.begin(), generated.end() - 1);  // the last chosen token is never fed
  const std::vector<at::Tensor> probs = reference_attention(model, fed);
  const auto S = static_cast<int64_t>(fed.size());
  const int64_t L = model.config().num_layers, H = model.config().num_heads, KV = model.config().num_kv_heads;
  double worst = 0.0;
  for (size_t r = 0; r < result.refreshes.size(); ++r) {
    const RefreshRecord& record = result.refreshes[r];
    const int64_t begin = record.processed;
    const int64_t end = std::min(r + 1 < result.refreshes.size() ? result.refreshes[r + 1].processed : S, S);
    const std::vector<float>& recorded = result.lost_attention[r].by_rollout[b];
    REQUIRE(static_cast<int64_t>(recorded.size()) == std::max<int64_t>(0, end - begin) * L);
    for (int64_t q = begin; q < end; ++q)
      for (int64_t l = 0; l < L; ++l) {
        double lost = 0.0;
        for (int64_t h = 0; h < H; ++h)
          for (const int64_t p : left_out(record, b, l, h / (H / KV))) lost += probs[l][h][q][p].item<double>();
        worst = std::max(worst, std::abs(lost / H - recorded[(q - begin) * L + l]));
      }
  }
  return worst;
}

Model tiny_model() {
  ModelConfig config = tiny_model_config(ModelFamily::Llama, 32, 4, 2, 50);
  config.num_layers = 3;
  return random_model(config, 7, at::kCPU, at::kFloat);
}

std::vector<int64_t> random_prompt(int64_t length) {
  std::mt19937 rng(3);
  std::vector<int64_t> ids(length);
  for (auto& id : ids) id = std::uniform_int_distribution<int64_t>(3, 49)(rng);
  return ids;
}

GenerationSettings shadowed(int64_t J, int64_t h) {
  GenerationSettings s;
  s.budget.J = J;
  s.budget.h = h;
  s.max_new_tokens = 14;
  s.rollouts = 2;
  s.sampling.temperature = 1.0;
  s.shadow_full = true;
  return s;
}

// Rollout 1 stops early: its later steps feed a token that is no query of its sequence.
const StopCheck kStopRolloutOne = [](int64_t b, const std::vector<int64_t>& generated) {
  return b == 1 && generated.size() >= 5;
};

}  // namespace

TEST_CASE("shadow: attention lost equals a from-scratch recomputation", "[shadow][attention-loss]") {
  const Model model = tiny_model();
  for (const std::string name : {"sliding", "h2o-true"}) {  // token-level and per-KV-head eviction
    INFO(name);
    auto policy = make_policy(name);
    const GenerationResult result = generate(model, *policy, random_prompt(30), shadowed(8, 4), kStopRolloutOne);
    REQUIRE(result.lost_attention.size() == result.refreshes.size());
    REQUIRE(result.rollouts[1].generated.size() < result.rollouts[0].generated.size());
    double most = 0.0;
    for (const auto& window : result.lost_attention)
      for (const float value : window.by_rollout[0]) most = std::max<double>(most, value);
    CHECK(most > 0.0);  // evicting most of the prompt loses some attention
    for (int64_t b = 0; b < 2; ++b) CHECK(worst_difference(model, result, b) < 1e-5);
  }
}

TEST_CASE("shadow: nothing evicted, nothing lost", "[shadow][attention-loss]") {
  const Model model = tiny_model();
  auto full = make_policy("full");
  CHECK(generate(model, *full, random_prompt(30), shadowed(8, 4)).lost_attention.empty());  // never refreshes
  auto sliding = make_policy("sliding");
  const GenerationResult roomy = generate(model, *sliding, random_prompt(30), shadowed(64, 4));
  REQUIRE(!roomy.refreshes.empty());  // decode refreshes every h tokens, evicting nothing
  for (const auto& window : roomy.lost_attention)
    for (const auto& values : window.by_rollout) {
      CHECK(!values.empty());
      for (const float value : values) CHECK(value == 0.0f);
    }
}

// Generation with a per-head policy on a tiny random model tends to keep the same entries in every head (the
// oldest gather the most attention), so the query-head → KV-head mapping is checked here on kept sets that
// differ by layer and head, against probabilities drawn at random.
TEST_CASE("shadow: attention on absent entries reads each query head's own KV head", "[shadow][attention-loss]") {
  const Model model = tiny_model();  // 4 query heads over 2 KV heads, 3 layers
  const int64_t L = 3, H = 4, KV = 2, N = 10, T = 2;
  KvCache cache(cache_shape(model.config()), 1, model.options(), false);
  model.forward(ids_tensor(random_prompt(N)), position_range(0, N), cache);
  // Layer l, KV head g keeps {g, 2 + g + l, 6 + l % 2, 8 + g}: ascending, and different for every (l, g).
  at::Tensor keep = at::empty({1, L, KV, 4}, at::kLong);
  for (int64_t l = 0; l < L; ++l)
    for (int64_t g = 0; g < KV; ++g) keep[0][l][g] = at::tensor({g, 2 + g + l, 6 + l % 2, 8 + g}, at::kLong);
  cache.compact_per_head(keep);
  at::manual_seed(1);
  std::vector<at::Tensor> probs;
  for (int64_t l = 0; l < L; ++l) probs.push_back(at::softmax(at::randn({1, H, T, N}) * 3, -1));
  const at::Tensor lost = attention_on_absent(probs, cache);  // [1, T, L]
  REQUIRE(lost.sizes() == at::IntArrayRef({1, T, L}));
  for (int64_t l = 0; l < L; ++l)
    for (int64_t t = 0; t < T; ++t) {
      double expected = 0.0;
      for (int64_t h = 0; h < H; ++h) {
        const at::Tensor kept = keep[0][l][h / (H / KV)];
        for (int64_t p = 0; p < N; ++p)
          if (!(kept == p).any().item<bool>()) expected += probs[l][0][h][t][p].item<double>();
      }
      CHECK(std::abs(lost[0][t][l].item<double>() - expected / H) < 1e-9);
    }
}
