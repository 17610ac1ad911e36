// KVpop's stateful mLSTM scorer (policies/kvpop_mlstm.h): the parallel form (training) and the recurrent
// form (the kvpop policy) against a step-by-step recomputation written here from the definition, in
// float64 and without stabilisation; the delayed readout reads nothing beyond the token that arrives;
// and the kvpop policy's scores at real refreshes equal the parallel form over the tokens fed so far.
#include "torch_catch.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <functional>

#include "engine/generate.h"
#include "model_test_util.h"
#include "test_support.h"
#include "policies/kvpop_scorer.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

constexpr int64_t KV = 2, F = 6, M = 4, S = 12;

mlstm::Weights random_weights(uint64_t seed, double input_bias = 0.0) {
  at::Generator g = at::detail::createCPUGenerator(seed);
  auto randn = [&](at::IntArrayRef dims) { return at::normal(0.0, 0.5, dims, g, at::TensorOptions()); };
  return {randn({KV, M, F}), randn({KV, M, F}), randn({KV, M, F}), randn({KV, F}), randn({KV}) + input_bias,
          randn({KV, F}),    randn({KV}) + 2.0, randn({KV, M}),    randn({KV})};
}

// r̂_u from the definition: C_q = Σ_{j≤q} (Π_{j<l≤q} f_l) i_j k̃_j ṽ_jᵀ, z_q likewise, q = read_at(u);
// h = C_qᵀ q̃_u / max(|z_q·q̃_u|, 1); r̂ = a·SiLU(LayerNorm(h)) + b. Float64, plain loops.
std::vector<std::vector<double>> reference_scores(const mlstm::Weights& w32, const at::Tensor& x32,
                                                  const std::function<int64_t(int64_t)>& read_at) {
  auto d = [](const at::Tensor& t) { return t.to(at::kDouble); };
  const at::Tensor x = d(x32)[0];  // [KV, S, F]
  std::vector<std::vector<double>> out(KV, std::vector<double>(S));
  for (int64_t h = 0; h < KV; ++h) {
    const at::Tensor q = at::matmul(x[h], d(w32.wq[h]).t()), k = at::matmul(x[h], d(w32.wk[h]).t()) / std::sqrt(double(M)),
                     v = at::matmul(x[h], d(w32.wv[h]).t());
    std::vector<double> input(S), forget(S);
    for (int64_t t = 0; t < S; ++t) {
      input[t] = std::exp((x[h][t] * d(w32.wi[h])).sum().item<double>() + w32.bi[h].item<double>());
      forget[t] = 1.0 / (1.0 + std::exp(-((x[h][t] * d(w32.wf[h])).sum().item<double>() + w32.bf[h].item<double>())));
    }
    for (int64_t u = 0; u < S; ++u) {
      const int64_t at_q = read_at(u);
      at::Tensor C = at::zeros({M, M}, at::kDouble), z = at::zeros({M}, at::kDouble);
      for (int64_t j = 0; j <= at_q; ++j) {
        double decay = input[j];
        for (int64_t l = j + 1; l <= at_q; ++l) decay *= forget[l];
        C += decay * at::outer(k[j], v[j]);
        z += decay * k[j];
      }
      const at::Tensor hv = at::matmul(q[u], C) / std::max(std::abs((z * q[u]).sum().item<double>()), 1.0);
      const at::Tensor centred = hv - hv.mean();
      const at::Tensor normed = centred / at::sqrt((centred * centred).mean() + 1e-5);
      out[h][u] = ((normed * at::sigmoid(normed)) * d(w32.a[h])).sum().item<double>() + w32.b[h].item<double>();
    }
  }
  return out;
}

void require_close(const at::Tensor& scores, const std::vector<std::vector<double>>& expected, double tolerance) {
  for (int64_t h = 0; h < KV; ++h)
    for (int64_t u = 0; u < S; ++u) {
      INFO("head " << h << " token " << u);
      CHECK(scores[0][h][u].item<double>() == Approx(expected[h][u]).margin(tolerance));
    }
}

// The recurrent form: absorb token t, then read the token `delay` places back.
at::Tensor recurrent_scores(const mlstm::Weights& w, const at::Tensor& x, int64_t delay) {
  const mlstm::Projection p = mlstm::project(w, x);
  mlstm::State state(1, KV, M, at::TensorOptions());
  at::Tensor out = at::full({1, KV, S}, std::nan(""), at::kFloat);
  auto read = [&](int64_t u) { out.select(2, u).copy_(mlstm::readout(w, state.read(p.q.select(2, u)).unsqueeze(2)).squeeze(2)); };
  for (int64_t t = 0; t < S; ++t) {
    state.absorb(p, t);
    if (t >= delay) read(t - delay);
  }
  for (int64_t u = std::max<int64_t>(S - delay, 0); u < S; ++u) read(u);  // still in the window: latest memory
  return out;
}

}  // namespace

TEST_CASE("mLSTM scorer: parallel and recurrent forms equal the step-by-step definition", "[kvpop][mlstm]") {
  const at::Tensor x = at::normal(0.0, 1.0, {1, KV, S, F}, at::detail::createCPUGenerator(3), at::TensorOptions());
  for (const double input_bias : {0.0, 60.0}) {  // 60: e^60 overflows float32 without the stabiliser
    const mlstm::Weights w = random_weights(1, input_bias);
    for (const int64_t delay : {0, 3}) {
      INFO("delay " << delay << ", input-gate bias " << input_bias);
      const auto expected = reference_scores(w, x, [&](int64_t u) { return std::min(u + delay, S - 1); });
      require_close(mlstm::delayed_scores(w, x, delay), expected, 1e-4);
      require_close(recurrent_scores(w, x, delay), expected, 1e-4);
    }
  }
}

TEST_CASE("mLSTM delayed readout reads the memory at u + delay and nothing later", "[kvpop][mlstm]") {
  const mlstm::Weights w = random_weights(2);
  at::Generator g = at::detail::createCPUGenerator(4);
  const at::Tensor x = at::normal(0.0, 1.0, {1, KV, S, F}, g, at::TensorOptions());
  const int64_t delay = 3, u = 4, q = u + delay;
  const at::Tensor base = mlstm::delayed_scores(w, x, delay);
  at::Tensor later = x.clone();
  later.narrow(2, q + 1, S - q - 1).normal_(0.0, 3.0);
  const at::Tensor changed_later = mlstm::delayed_scores(w, later, delay);
  for (int64_t t = 0; t <= u; ++t) CHECK(changed_later[0][0][t].item<float>() == base[0][0][t].item<float>());
  at::Tensor at_q = x.clone();
  at_q.narrow(2, q, 1).normal_(0.0, 3.0);
  CHECK(std::abs(mlstm::delayed_scores(w, at_q, delay)[0][0][u].item<float>() - base[0][0][u].item<float>()) > 1e-4);
}

TEST_CASE("kvpop with an mLSTM scorer: refresh scores equal the parallel form over the tokens fed", "[kvpop][mlstm]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const Model model = Model::load(shared_dir() / "models/stories260K");
  const auto& c = model.config();
  KvpopScorerShape shape{ScorerKind::Mlstm, c.num_layers, c.num_kv_heads, c.head_dim, 8, 5};
  const int64_t Fd = 2 * c.head_dim;
  const KvpopScorer created = KvpopScorer::create(shape, at::zeros({c.num_layers, c.num_kv_heads, Fd}),
                                                  at::ones({c.num_layers, c.num_kv_heads, Fd}), 11);
  const std::filesystem::path file = kvbench::testing::scratch_path("mlstm_test.safetensors");
  created.save(file);
  const KvpopScorer scorer = KvpopScorer::load(file);
  REQUIRE(scorer.shape().delay == 5);
  auto policy = make_policy("kvpop:scorer=" + file.string());
  std::vector<int64_t> prompt;
  for (int64_t i = 0; i < 60; ++i) prompt.push_back(3 + (i * 37) % (c.vocab_size - 3));
  GenerationSettings settings;
  settings.budget.J = 24;
  settings.budget.h = 8;
  settings.budget.recent = 6;
  settings.budget.sinks = 2;
  settings.max_new_tokens = 2;
  const GenerationResult result = generate(model, *policy, prompt, settings);
  // Layer 0's keys and values depend on the token and its position only, so a full pass gives them.
  std::vector<QueryKeyValue> layers;
  model.forward_sequence(ids_tensor(prompt), position_range(0, prompt.size()), &layers);
  int64_t checked = 0;
  for (const auto& record : result.refreshes) {
    if (record.phase != "prefill") continue;
    const int64_t fed = record.processed;
    const at::Tensor features = KvpopScorer::features(model, layers[0].k.narrow(2, 0, fed), layers[0].v.narrow(2, 0, fed),
                                                      position_range(0, fed));
    const at::Tensor expected = scorer.score(0, features)[0];  // [KV, fed]
    const at::Tensor scores = record.scores[0][0];  // [KV, N]
    // Token level until the first per-head compaction: the same positions for every head.
    const at::Tensor& before = record.positions_before;
    const at::Tensor positions = before.dim() == 2 ? before[0].expand({scores.size(0), -1}) : before[0][0];
    for (int64_t h = 0; h < positions.size(0); ++h)
      for (int64_t n = 0; n < positions.size(1); ++n) {
        const int64_t p = positions[h][n].item<int64_t>();
        INFO("refresh after " << fed << " tokens, head " << h << ", position " << p);
        if (p + shape.delay <= fed - 1) {
          CHECK(scores[h][n].item<float>() == Approx(expected[h][p].item<float>()).margin(1e-4));
          ++checked;
        } else {
          CHECK(scores[h][n].item<float>() > 1e29f);  // not left the window yet: not scored, kept
        }
      }
  }
  CHECK(checked > 50);
  std::filesystem::remove(file);
}
