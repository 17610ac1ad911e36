// Training pieces: autograd through Model::forward_sequence against finite differences (float64),
// the training forward against the cached inference forward, AdamW / schedule / clipping against
// hand-derived values, seeded data order, and checkpoints written then read back by Model::load.
#include "torch_catch.h"

#include <ATen/core/grad_mode.h>

#include <cmath>
#include <fstream>
#include <numeric>

#include "model/checkpoint_writer.h"
#include "model/random_model.h"
#include "model/weights.h"
#include "model_test_util.h"
#include "tasks/rng.h"
#include "test_support.h"
#include "train/lm_trainer.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

ModelConfig tiny_config(ModelFamily family, bool tied) { return tiny_model_config(family, 8, 2, 1, 13, tied); }

// Random weights of a larger scale than the 0.02 init, and non-unit norms, so every path matters.
ModelWeights perturbed_weights(const ModelConfig& c, at::ScalarType dtype) {
  ModelWeights w = random_model(c, 7, at::kCPU, dtype).weights();
  at::NoGradGuard no_grad;
  for (auto& [name, t] : named_weights(c, w)) t.add_(at::randn(t.sizes(), t.options()) * 0.3);
  return w;
}

TrainingExample example(std::vector<int64_t> ids) { return {std::move(ids), {}}; }

}  // namespace

TEST_CASE("autograd through forward_sequence matches central finite differences (float64)", "[train][gradient]") {
  at::manual_seed(0);
  for (const auto family : {ModelFamily::Llama, ModelFamily::Qwen2, ModelFamily::Qwen3}) {
    const ModelConfig config = tiny_config(family, family == ModelFamily::Llama);
    ModelWeights weights = perturbed_weights(config, at::kDouble);
    const TrainingExample a = example({1, 5, 7, 2, 9, 12, 3}), b = example({4, 4, 8, 0, 11});
    const TokenBatch batch = make_batch({&a, &b});
    const Model model = Model::from_weights(config, weights);
    for (auto& [name, t] : named_weights(config, weights)) t.requires_grad_(true);
    language_model_loss(model, batch).backward();
    at::NoGradGuard no_grad;
    const double h = 1e-6;
    for (auto& [name, t] : named_weights(config, weights)) {
      INFO(to_string(family) << " " << name);
      REQUIRE(t.grad().defined());
      const at::Tensor flat = t.view({-1});
      for (int64_t i : {int64_t{0}, flat.numel() / 2, flat.numel() - 1}) {
        const double original = flat[i].item<double>();
        flat[i] = original + h;
        const double up = language_model_loss(model, batch).item<double>();
        flat[i] = original - h;
        const double down = language_model_loss(model, batch).item<double>();
        flat[i] = original;
        const double numeric = (up - down) / (2 * h);
        const double analytic = t.grad().view({-1})[i].item<double>();
        CHECK(std::abs(analytic - numeric) <= 1e-7 + 1e-5 * std::abs(numeric));
      }
    }
  }
}

TEST_CASE("forward_sequence equals the cached forward's logits", "[train]") {
  const ModelConfig config = tiny_config(ModelFamily::Qwen3, false);
  const Model model = Model::from_weights(config, perturbed_weights(config, at::kFloat));
  const std::vector<int64_t> ids = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  const at::Tensor sequence = model.forward_sequence(ids_tensor(ids), position_range(0, ids.size()))[0];
  CHECK(max_abs_diff(sequence, chunked_logits(model, ids, 3)) < 1e-5);
}

TEST_CASE("AdamW, cosine schedule and clipping follow their textbook formulas", "[train][optimizer]") {
  at::Tensor p = at::tensor({1.0, -2.0}, at::kDouble).requires_grad_(true);
  at::Tensor q = at::tensor({0.5}, at::kDouble).requires_grad_(true);
  AdamW adam({p, q}, {true, false}, {0.9, 0.99, 1e-8, 0.1});
  (p * at::tensor({0.5, 3.0}, at::kDouble)).sum().add(q.pow(2).sum()).backward();  // grads: [0.5, 3], [1]
  adam.step(0.01);
  // Step 1: m̂ = g, v̂ = g², so the update is lr·g/(|g|+eps) plus decoupled decay lr·wd·p (p only).
  CHECK(p[0].item<double>() == Approx(1.0 * (1 - 0.001) - 0.01 * 0.5 / (0.5 + 1e-8)).epsilon(1e-12));
  CHECK(p[1].item<double>() == Approx(-2.0 * (1 - 0.001) - 0.01 * 3.0 / (3.0 + 1e-8)).epsilon(1e-12));
  CHECK(q[0].item<double>() == Approx(0.5 - 0.01 * 1.0 / (1.0 + 1e-8)).epsilon(1e-12));
  adam.zero_grad();
  CHECK_FALSE(p.grad().defined());

  const CosineSchedule schedule{1e-3, 1e-4, 10, 110};
  CHECK(schedule.at(0) == Approx(1e-4));
  CHECK(schedule.at(9) == Approx(1e-3));
  CHECK(schedule.at(10) == Approx(1e-3));
  CHECK(schedule.at(60) == Approx(1e-4 + 0.5 * 9e-4));
  CHECK(schedule.at(110) == Approx(1e-4));

  at::Tensor r = at::zeros({2}, at::kDouble).requires_grad_(true);
  (r * at::tensor({3.0, 4.0}, at::kDouble)).sum().backward();
  CHECK(clip_grad_norm({r}, 1.0) == Approx(5.0));
  CHECK(r.grad()[0].item<double>() == Approx(0.6));
  CHECK(r.grad()[1].item<double>() == Approx(0.8));
}

TEST_CASE("example order: seeded permutations, every example once per epoch", "[train]") {
  ExampleOrder first(5, 42), second(5, 42), other(5, 43);
  std::vector<size_t> a, b, c;
  for (int i = 0; i < 10; ++i) {
    a.push_back(first.next());
    b.push_back(second.next());
    c.push_back(other.next());
  }
  CHECK(a == b);
  CHECK(a != c);
  for (const auto& epoch : {std::vector<size_t>(a.begin(), a.begin() + 5), std::vector<size_t>(a.begin() + 5, a.end())}) {
    std::vector<size_t> sorted = epoch;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == std::vector<size_t>{0, 1, 2, 3, 4});
  }
  CHECK(std::vector<size_t>(a.begin(), a.begin() + 5) != std::vector<size_t>(a.begin() + 5, a.end()));
}

TEST_CASE("training lowers the loss and is bit-identical for the same seed", "[train]") {
  const ModelConfig config = tiny_config(ModelFamily::Llama, true);
  std::vector<TrainingExample> data;
  for (int64_t s = 0; s < 6; ++s) data.push_back(example({1, 2 + s, 3, 4, 2 + s, 3, 4, 2 + s}));
  LmTrainingOptions options;
  options.steps = 150;
  options.batch_size = 3;
  options.schedule = {3e-2, 3e-3, 10, 150};
  auto run = [&] {
    ModelWeights w = random_model(config, 1, at::kCPU, at::kFloat).weights();
    const auto losses = train_language_model(config, w, data, options);
    return std::make_pair(losses, w);
  };
  const auto [losses, trained] = run();
  const auto [losses_again, trained_again] = run();
  CHECK(losses.back() < 0.5 * losses.front());
  CHECK(losses == losses_again);
  const auto named = named_weights(config, trained), named_again = named_weights(config, trained_again);
  for (size_t i = 0; i < named.size(); ++i) CHECK(at::equal(named[i].second, named_again[i].second));
}

TEST_CASE("save_model → Model::load round-trips weights and logits", "[train][checkpoint]") {
  const auto dir = kvbench::testing::scratch_path("save");
  for (const auto family : {ModelFamily::Llama, ModelFamily::Qwen2, ModelFamily::Qwen3}) {
    const ModelConfig config = tiny_config(family, family != ModelFamily::Qwen2);
    const ModelWeights weights = perturbed_weights(config, at::kFloat);
    save_model(dir, config, weights, at::kFloat, {1, 2});
    const Model loaded = Model::load(dir);
    CHECK(loaded.config().tie_word_embeddings == config.tie_word_embeddings);
    const auto expected = named_weights(config, weights), got = named_weights(loaded.config(), loaded.weights());
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO(expected[i].first);
      CHECK(got[i].first == expected[i].first);
      CHECK(at::equal(got[i].second, expected[i].second));
    }
    const json generation = read_json_file(dir / "generation_config.json");
    CHECK(generation.at("eos_token_id") == 2);
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("a real checkpoint saved in bf16 reloads to the bf16-rounded weights", "[train][checkpoint]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const Model original = Model::load(shared_dir() / "models/stories260K");
  const auto dir = kvbench::testing::scratch_path("save_bf16");
  save_model(dir, original.config(), original.weights(), at::kBFloat16);
  const Model reloaded = Model::load(dir);
  std::ifstream file(dir / "model.safetensors", std::ios::binary);
  uint64_t header_length = 0;
  file.read(reinterpret_cast<char*>(&header_length), 8);
  CHECK(header_length % 8 == 0);
  const auto a = named_weights(original.config(), original.weights());
  const auto b = named_weights(reloaded.config(), reloaded.weights());
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(at::equal(a[i].second.to(at::kBFloat16).to(at::kFloat), b[i].second));
  std::filesystem::remove_all(dir);
}

TEST_CASE("training learns to copy a repeated span after a random gap (induction)", "[train][induction]") {
  // A span of distinct random tokens, a gap of random length and content, the span again. The gap moves
  // the copy's source, so attention by position cannot do it: only matching the current token earlier
  // and copying what followed it (an induction head, what rare-fact recall needs) gets below ln(vocab).
  // Fresh sequences every step, as in the demo's training, so memorising cannot either.
  const int64_t vocab = 32, span = 8, max_gap = 12, batch = 16;
  const ModelConfig config = tiny_model_config(ModelFamily::Llama, 64, 4, 4, vocab);
  const BatchSource batches = [&](int64_t step) {
    tasks::SplitMix64 rng(static_cast<uint64_t>(step));
    std::vector<TrainingExample> examples;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<int64_t> tokens(vocab);
      std::iota(tokens.begin(), tokens.end(), 0);
      rng.shuffle(tokens);
      std::vector<int64_t> ids(tokens.begin(), tokens.begin() + span);
      const auto gap = static_cast<int64_t>(rng.below(max_gap + 1));
      for (int64_t g = 0; g < gap; ++g) ids.push_back(static_cast<int64_t>(rng.below(vocab)));
      ids.insert(ids.end(), tokens.begin(), tokens.begin() + span);
      std::vector<float> weights(ids.size(), 0.0f);
      std::fill(weights.end() - (span - 1), weights.end(), 1.0f);  // the copied tokens after the first
      examples.push_back({ids, weights});
    }
    return examples;
  };
  LmTrainingOptions options;
  options.steps = 1500;  // the copy forms after 300-1000 steps (loss 0.03 by step 2000 when tried)
  options.schedule = {3e-3, 3e-4, 40, 1500};
  ModelWeights weights = random_model(config, 0, at::kCPU, at::kFloat).weights();
  const auto losses = train_language_model(config, weights, batches, options);
  const double last = std::accumulate(losses.end() - 20, losses.end(), 0.0) / 20;
  INFO("first " << losses.front() << ", last " << last);
  CHECK(last < 0.5);  // ln 32 = 3.47 without copying
}
