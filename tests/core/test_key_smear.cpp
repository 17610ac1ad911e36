// The key smear of kvbench's demo model (ModelConfig::key_smear, Model::smear_keys): layer 0's cached keys
// against a hand computation from the weights (plain loops: RMSNorm, projection, gate, RoPE), and the cache
// paths (chunks, eviction, rollouts, checkpoint files) against the whole-sequence forward.
#include "torch_catch.h"

#include <cmath>

#include "model/checkpoint_writer.h"
#include "model/random_model.h"
#include "model_test_util.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

// A float64 Qwen3-shaped model (q/k-norm on) with the smear and distinct gates per KV head.
Model smeared_model() {
  ModelConfig c = tiny_model_config(ModelFamily::Qwen3, 32, 4, 2, 50);
  c.key_smear = true;
  ModelWeights w = random_model(c, 11, at::kCPU, at::kDouble).weights();
  w.layers[0].k_smear = at::tensor({-1.5, 2.0}, at::kDouble);
  w.layers[0].k_norm = at::linspace(0.5, 1.5, c.head_dim, at::kDouble);
  return Model::from_weights(c, w);
}

std::vector<double> row(const at::Tensor& t) {
  const at::Tensor c = t.contiguous().to(at::kDouble);
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

std::vector<double> rms_scaled(const std::vector<double>& x, const std::vector<double>& scale, double eps) {
  double mean_square = 0;
  for (double v : x) mean_square += v * v / static_cast<double>(x.size());
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] / std::sqrt(mean_square + eps) * scale[i];
  return out;
}

// Layer 0's pre-RoPE key of token `id` for KV head `head`, by hand.
std::vector<double> raw_key(const Model& model, int64_t id, int64_t head) {
  const ModelConfig& c = model.config();
  const LayerWeights& w = model.weights().layers[0];
  const auto normed = rms_scaled(row(model.weights().embed_tokens[id]), row(w.input_norm), c.rms_norm_eps);
  std::vector<double> k(c.head_dim);
  for (int64_t d = 0; d < c.head_dim; ++d) {
    const auto weights = row(w.k_proj[head * c.head_dim + d]);
    for (size_t i = 0; i < normed.size(); ++i) k[d] += weights[i] * normed[i];
  }
  return rms_scaled(k, row(w.k_norm), c.rms_norm_eps);
}

// The cached key of the token at `position` (previous token `previous`, −1 if none): smear, then RoPE.
std::vector<double> expected_key(const Model& model, int64_t id, int64_t previous, int64_t position, int64_t head) {
  const ModelConfig& c = model.config();
  std::vector<double> k = raw_key(model, id, head);
  if (previous >= 0) {
    const double a = 1.0 / (1.0 + std::exp(-model.weights().layers[0].k_smear[head].item<double>()));
    const auto before = raw_key(model, previous, head);
    for (size_t d = 0; d < k.size(); ++d) k[d] = (1 - a) * k[d] + a * before[d];
  }
  const int64_t half = c.head_dim / 2;
  std::vector<double> rotated(k.size());
  for (int64_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(position) * std::pow(c.rope_theta, -2.0 * i / c.head_dim);
    rotated[i] = k[i] * std::cos(angle) - k[i + half] * std::sin(angle);
    rotated[i + half] = k[i + half] * std::cos(angle) + k[i] * std::sin(angle);
  }
  return rotated;
}

void check_key(const std::vector<double>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t d = 0; d < actual.size(); ++d) CHECK(actual[d] == Approx(expected[d]).margin(1e-10));
}

const std::vector<int64_t> kIds = {3, 17, 17, 40, 8, 3, 29, 17};

}  // namespace

TEST_CASE("key smear: layer-0 cached keys equal a hand computation (previous token's key, gate, RoPE)", "[model]") {
  const Model model = smeared_model();
  KvCache cache(cache_shape(model.config()), 1, model.options(), false);
  model.forward(ids_tensor(kIds), position_range(0, kIds.size()), cache);
  for (int64_t head = 0; head < 2; ++head)
    for (int64_t t = 0; t < static_cast<int64_t>(kIds.size()); ++t) {
      INFO("head " << head << ", position " << t);
      check_key(row(cache.keys(0)[0][head][t]), expected_key(model, kIds[t], t == 0 ? -1 : kIds[t - 1], t, head));
    }
  // The gates take part: other gates, other layer-0 keys.
  ModelWeights other = model.weights();
  other.layers[0].k_smear = at::tensor({3.0, -3.0}, at::kDouble);
  KvCache plain(cache_shape(model.config()), 1, model.options(), false);
  Model::from_weights(model.config(), other).forward(ids_tensor(kIds), position_range(0, kIds.size()), plain);
  CHECK_FALSE(at::allclose(plain.keys(0), cache.keys(0)));
}

TEST_CASE("key smear: token-by-token and chunked decoding equal the whole-sequence forward", "[model]") {
  const Model model = smeared_model();
  const at::Tensor whole = model.forward_sequence(ids_tensor(kIds), position_range(0, kIds.size()))[0];
  for (int64_t chunk : {1, 3, 8}) {
    INFO("chunk " << chunk);
    CHECK(max_abs_diff(chunked_logits(model, kIds, chunk), whole) < 1e-10);
  }
}

TEST_CASE("key smear: after eviction and across rollouts the new token still reads its true previous token", "[model]") {
  const Model model = smeared_model();
  std::vector<QueryKeyValue> layers;
  model.forward_sequence(ids_tensor(kIds), position_range(0, kIds.size()), &layers);
  const int64_t n = static_cast<int64_t>(kIds.size()) - 1;
  KvCache cache(cache_shape(model.config()), 1, model.options(), false);
  const std::vector<int64_t> prompt(kIds.begin(), kIds.begin() + n);
  model.forward(ids_tensor(prompt), position_range(0, n), cache);
  cache.compact(at::tensor({0, 2}, at::kLong));  // the newest token (the next one's predecessor) is evicted
  cache.expand_batch(3);
  CHECK(at::equal(cache.last_token_ids(), at::full({3}, kIds[n - 1], at::kLong)));
  model.forward(at::full({3, 1}, kIds[n], at::kLong), at::full({3, 1}, n, at::kLong), cache);
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t head = 0; head < 2; ++head)
      check_key(row(cache.keys(0)[b][head][2]), row(layers[0].k[0][head][n]));
}

TEST_CASE("key smear: a saved checkpoint loads with its gates and gives the same logits", "[model]") {
  const Model model = smeared_model();
  const auto dir = kvbench::testing::scratch_path("key_smear");
  save_model(dir, model.config(), model.weights(), at::kDouble, {0, 1});
  const Model loaded = Model::load(dir, at::kCPU, at::kDouble);
  CHECK(loaded.config().key_smear);
  CHECK(at::equal(loaded.weights().layers[0].k_smear, model.weights().layers[0].k_smear));
  CHECK_FALSE(loaded.weights().layers[1].k_smear.defined());
  CHECK(max_abs_diff(chunked_logits(loaded, kIds, 2), chunked_logits(model, kIds, 2)) < 1e-12);
  std::filesystem::remove_all(dir);
}
