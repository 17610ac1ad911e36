// Samples that refresh at the same decode step are scored together (engine/refresh.h: refresh_together;
// counter-causal policies pack small blocks of several samples' entries into shared weight products). Each
// sample must get exactly — bitwise — the scores, kept sets and compacted cache of refreshing alone, which
// rests on our linear kernel computing every row independently of the rows packed beside it (checked
// first). OpenBLAS's sgemm fails that check here (every shape below, at 65 rows and up), so blocks on BLAS
// are not packed.
#include "torch_catch.h"

#include <ATen/Parallel.h>

#include <random>

#include "engine/refresh.h"
#include "model/linear.h"
#include "model_test_util.h"
#include "policies/counter_causal_pass.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

// Rows [before, before + rows) of f(x) computed among `before` and `after` other rows, against f of those rows alone.
template <class F>
void check_rows_independent(const F& f, int64_t K, int64_t rows, int64_t before, int64_t after, uint64_t seed) {
  at::manual_seed(seed);
  const at::Tensor mine = at::randn({rows, K});
  const at::Tensor packed = at::cat({at::randn({before, K}), mine, at::randn({after, K})});
  INFO("K " << K << ", rows " << rows << " among " << before << " + " << after);
  CHECK(at::equal(f(packed).narrow(0, before, rows), f(mine)));
}

// One sample about to refresh: a cache filled by a causal pass over a random prompt (with the attention
// its policy observes), optionally forked into rollouts, and that sample's own policy instance.
struct PreparedSample {
  std::unique_ptr<Policy> policy;
  std::unique_ptr<KvCache> cache;
};

PreparedSample prepare(const Model& model, const std::string& policy_name, int64_t length, int64_t rollouts,
                       uint32_t seed) {
  PreparedSample s{make_seeded_policy(policy_name, seed), nullptr};
  s.cache = std::make_unique<KvCache>(cache_shape(model.config()), 1, model.options(), s.policy->needs().last_layer_input);
  std::mt19937 rng(seed);
  std::vector<int64_t> ids(length);
  for (auto& id : ids) id = std::uniform_int_distribution<int64_t>(3, model.config().vocab_size - 1)(rng);
  ForwardOptions options;
  options.attention = s.policy->needs().step_attention;
  options.queries = s.policy->needs().step_queries;
  s.policy->observe(model.forward(ids_tensor(ids), position_range(0, length), *s.cache, options), *s.cache);
  if (rollouts > 1) {
    s.cache->expand_batch(rollouts);
    s.policy->expand_batch(rollouts);
  }
  return s;
}

struct SampleSpec {
  std::string policy;
  int64_t length, rollouts;
};

// Mixed policies, cache lengths on both sides of the small-row threshold (64) and of the pass's 512-row
// packs, rollouts (a sample's rows count once per rollout), a per-head policy and token-level policies
// with per-sample state through the default (one by one) path, one policy under two knob settings (two
// refresh groups: grouped by spec, not name).
const std::vector<SampleSpec> kSamples = {
    {"counter-causal", 21, 1},      {"counter-causal", 37, 1},       {"counter-causal", 90, 1},
    {"counter-causal", 30, 3},      {"counter-causal", 260, 1},      {"counter-causal", 300, 2},
    {"counter-causal-fast", 19, 1}, {"counter-causal-fast", 75, 1},  {"counter-causal-fast", 200, 2},
    {"counter-causal-fast", 45, 1}, {"h2o-true", 40, 1},             {"h2o-true", 66, 2},
    {"h2o", 50, 1},                 {"tova", 33, 1},                 {"tova:layers=each", 35, 1},
    {"random", 28, 1}};

void check_refresh_together_equals_alone(const Model& model, int threads) {
  const ThreadsFor set(threads);
  CacheBudget budget;
  budget.J = 16;
  budget.h = 4;
  budget.min_gap = 1;
  std::vector<PreparedSample> alone, together;
  for (size_t i = 0; i < kSamples.size(); ++i) {
    const SampleSpec& spec = kSamples[i];
    alone.push_back(prepare(model, spec.policy, spec.length, spec.rollouts, 100 + i));
    together.push_back(prepare(model, spec.policy, spec.length, spec.rollouts, 100 + i));
  }
  std::vector<RefreshJob> jobs;
  for (PreparedSample& s : together) jobs.push_back({*s.cache, *s.policy, budget});
  const std::vector<RefreshRecord> joint = refresh_together(model, jobs);
  REQUIRE(joint.size() == kSamples.size());
  for (size_t i = 0; i < kSamples.size(); ++i) {
    INFO(threads << " threads, sample " << i << ": " << kSamples[i].policy << ", " << kSamples[i].length << " entries, "
                   << kSamples[i].rollouts << " rollouts");
    const RefreshRecord own = refresh(model, *alone[i].cache, *alone[i].policy, budget);
    REQUIRE(joint[i].scores.defined() == own.scores.defined());
    if (own.scores.defined()) CHECK(at::equal(joint[i].scores, own.scores));
    CHECK(at::equal(joint[i].positions_before, own.positions_before));
    CHECK(at::equal(joint[i].kept_positions, own.kept_positions));
    CHECK(joint[i].size_after == own.size_after);
    CHECK(at::equal(together[i].cache->keys(0), alone[i].cache->keys(0)));
  }
}

}  // namespace

TEST_CASE("our linear kernel computes rows independently of the rows packed beside it (up to kSmallRows)",
          "[refresh_together]") {
  // The pass's weight shapes: stories260K (64 → 64, 64 → 172, 172 → 64) and Qwen2.5-0.5B (896 → 896,
  // 896 → 4864, 4864 → 896).
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{64, 64}, {64, 172}, {172, 64}, {896, 896}, {896, 4864}, {4864, 896}};
  for (int threads : {1, 2}) {
    const ThreadsFor set(threads);
    for (auto [K, N] : shapes) {
      at::manual_seed(K * 7 + N);
      const at::Tensor weight = at::randn({N, K}) / std::sqrt(static_cast<double>(K));
      auto product = [&](const at::Tensor& x) { return kvbench::linear(x, weight); };
      INFO(threads << " threads, weight " << N << " × " << K);
      check_rows_independent(product, K, 5, 11, 40, 1);
      check_rows_independent(product, K, 21, 0, 43, 2);
      check_rows_independent(product, K, 30, 34, 0, 3);
    }
  }
}

TEST_CASE("samples refreshing together get exactly the scores, kept sets and caches of refreshing alone (stories260K)",
          "[refresh_together]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const Model model = Model::load(shared_dir() / "models/stories260K");
  for (int threads : {1, 2}) check_refresh_together_equals_alone(model, threads);
}

TEST_CASE("samples refreshing together get exactly the scores, kept sets and caches of refreshing alone (tiny-qwen3)",
          "[refresh_together]") {
  KVBENCH_REQUIRE_SHARED("models/tiny-qwen3");
  const Model model = Model::load(shared_dir() / "models/tiny-qwen3");
  for (int threads : {1, 2}) check_refresh_together_equals_alone(model, threads);
}

TEST_CASE("a counter-causal pass packed over samples with many blocks each equals each sample's own pass",
          "[refresh_together]") {
  KVBENCH_REQUIRE_SHARED("models/tiny-qwen3");
  const Model model = Model::load(shared_dir() / "models/tiny-qwen3");
  // pass_rows 48: samples of several blocks whose last block is short, packs that fill and overflow.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{130, 1}, {47, 2}, {20, 1}, {97, 1}, {9, 3}};
  std::vector<PreparedSample> samples;
  std::vector<CounterCausalSample> passes;
  for (size_t i = 0; i < shapes.size(); ++i) {
    samples.push_back(prepare(model, "counter-causal", shapes[i].first, shapes[i].second, 7 + i));
    passes.push_back({*samples.back().cache, model.embed(samples.back().cache->token_ids()), static_cast<int64_t>(i % 2)});
  }
  for (bool with_mlp : {true, false}) {
    const int64_t first_layer = with_mlp ? 0 : model.config().num_layers - 1;
    const std::vector<at::Tensor> joint = counter_causal_scores_together(model, passes, first_layer, with_mlp, 48);
    for (size_t i = 0; i < passes.size(); ++i) {
      INFO("sample " << i << (with_mlp ? " (full pass)" : " (last layer)"));
      CHECK(at::equal(joint[i], counter_causal_scores(model, passes[i].cache, passes[i].input, first_layer, with_mlp,
                                                  passes[i].min_gap, 48)));
    }
  }
}
