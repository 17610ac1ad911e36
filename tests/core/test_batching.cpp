// Batched samples (continuous batching) change nothing: every sample decoded with others gives exactly
// the tokens, refresh schedule, kept sets and scores it gives alone; a finished sample's slot is refilled.
#include "torch_catch.h"

#include <map>
#include <random>

#include <fmt/format.h>

#include "common/error.h"
#include "engine/allocator.h"
#include "engine/generate.h"
#include "model/random_model.h"
#include "model_test_util.h"
#include "random_trial.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

// A trial with rollouts and sampling drawn too (random_trial draws greedy single-rollout settings).
Trial batch_trial(std::mt19937& rng, const std::vector<std::string>& policies) {
  Trial t = random_trial(rng, policies);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  t.settings.rollouts = pick(1, 3);
  if (pick(0, 1)) t.settings.sampling = {0.9, 0.95, 0, static_cast<uint64_t>(pick(0, 1000))};
  return t;
}

bool valid(const Trial& t) {
  const KeepRule rule = make_policy(t.policy)->keep_rule(t.settings.budget);
  return rule.recent <= t.settings.budget.J && rule.sinks + rule.recent <= t.settings.budget.J;
}

void check_same(const GenerationResult& alone, const GenerationResult& batched) {
  REQUIRE(alone.rollouts.size() == batched.rollouts.size());
  for (size_t r = 0; r < alone.rollouts.size(); ++r) {
    CHECK(alone.rollouts[r].generated == batched.rollouts[r].generated);
    CHECK(alone.rollouts[r].stop_reason == batched.rollouts[r].stop_reason);
  }
  REQUIRE(alone.refreshes.size() == batched.refreshes.size());
  for (size_t i = 0; i < alone.refreshes.size(); ++i) {
    const RefreshRecord &a = alone.refreshes[i], &b = batched.refreshes[i];
    CHECK(a.phase == b.phase);
    CHECK(a.step == b.step);
    CHECK(at::equal(a.positions_before, b.positions_before));
    CHECK(at::equal(a.kept_positions, b.kept_positions));
    REQUIRE(a.scores.defined() == b.scores.defined());
    // Bitwise: the linear kernel computes each row the same whatever rows it shares a pass with.
    if (a.scores.defined()) CHECK(at::equal(a.scores, b.scores));
  }
  CHECK(alone.peak_cache_size == batched.peak_cache_size);
  CHECK(alone.mean_cache_size == batched.mean_cache_size);
}

// Runs `trials` through generate_continuously with `batch` slots; results by trial index.
std::vector<GenerationResult> run_batched(const Model& model, const std::vector<Trial>& trials, int64_t batch,
                                          int64_t max_rows = 0) {
  std::vector<std::unique_ptr<Policy>> policies;
  std::vector<std::unique_ptr<SampleGeneration>> generations;
  std::vector<SampleGeneration*> list;
  for (size_t i = 0; i < trials.size(); ++i) {
    policies.push_back(make_seeded_policy(trials[i].policy, i));
    generations.push_back(
        std::make_unique<SampleGeneration>(model, *policies.back(), trials[i].prompt, trials[i].settings));
    list.push_back(generations.back().get());
  }
  generate_continuously(model, batch, list, max_rows);
  std::vector<GenerationResult> results;
  for (auto& g : generations) {
    CHECK(g->done());
    results.push_back(g->take());
  }
  return results;
}

// A prefill-heavy trial: a long prompt in chunks that are mostly small (several samples' chunks share our
// kernel's call) and sometimes over kSmallRows (such a chunk's products take BLAS by themselves), a few new
// tokens, and any allocator (ragged caches too). Settings the allocator refuses are drawn again.
Trial prefill_trial(std::mt19937& rng, const std::vector<std::string>& policies) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Trial t = batch_trial(rng, policies);
  CacheBudget& b = t.settings.budget;
  for (int64_t i = 0, n = pick(100, 300); i < n; ++i) t.prompt.push_back(pick(3, 511));
  b.h = pick(0, 4) == 0 ? pick(65, 100) : pick(1, 12);
  const std::vector<std::string> allocators = allocator_names();
  b.allocator = allocators[pick(0, allocators.size() - 1)];
  // dms needs its threshold (and then keeps by it, not J); layers needs a ratio per layer and is drawn again.
  if (b.allocator == "dms") b.allocator = fmt::format("dms:threshold={},window={}", -pick(0, 20), pick(0, 32));
  b.ragged = find_allocator(b.allocator).ragged();
  b.own_budget = find_allocator(b.allocator).own_budget();
  t.settings.max_new_tokens = pick(1, 4);
  return t;
}

Trial with_files(Trial t, const Model& model) {
  t.policy = with_test_files(t.policy, model);
  return t;
}

// Whether SampleGeneration accepts the trial's settings (validate and the allocator's checks).
bool accepted(const Model& model, const Trial& t) {
  if (!valid(t)) return false;
  try {
    auto policy = make_seeded_policy(t.policy, 0);
    SampleGeneration generation(model, *policy, t.prompt, t.settings);
    return true;
  } catch (const Error&) {
    return false;
  }
}

using DrawTrial = Trial (*)(std::mt19937&, const std::vector<std::string>&);

void check_batching_changes_nothing(const Model& model, uint32_t seed, int64_t count, DrawTrial draw = batch_trial) {
  std::vector<std::string> policies = policy_names();
  std::mt19937 rng(seed);
  std::vector<Trial> trials;
  while (static_cast<int64_t>(trials.size()) < count)
    if (Trial t = with_files(draw(rng, policies), model); accepted(model, t)) trials.push_back(std::move(t));
  std::vector<GenerationResult> alone;
  for (size_t i = 0; i < trials.size(); ++i) {
    auto policy = make_seeded_policy(trials[i].policy, i);
    alone.push_back(generate(model, *policy, trials[i].prompt, trials[i].settings));
  }
  // Last: all together with passes capped at 40 rows, so most prompt chunks wait for a later pass.
  for (const auto& [batch, max_rows] : {std::pair<int64_t, int64_t>{2, 0}, {5, 0}, {count, 0}, {count, 40}}) {
    const std::vector<GenerationResult> batched = run_batched(model, trials, batch, max_rows);
    for (size_t i = 0; i < trials.size(); ++i) {
      const CacheBudget& b = trials[i].settings.budget;
      INFO("batch " << batch << ", max rows " << max_rows << ", trial " << i << ": " << trials[i].policy << " P=" << trials[i].prompt.size()
                    << " J=" << b.J << " h=" << b.h << " allocator=" << b.allocator
                    << " rollouts=" << trials[i].settings.rollouts);
      check_same(alone[i], batched[i]);
    }
  }
}

}  // namespace

TEST_CASE("batched samples decode exactly as alone (tiny-qwen3: q/k-norm, GQA)", "[batch]") {
  KVBENCH_REQUIRE_SHARED("models/tiny-qwen3");
  check_batching_changes_nothing(Model::load(shared_dir() / "models/tiny-qwen3"), 11, 16);
}

TEST_CASE("batched samples decode exactly as alone (stories260K, a trained model)", "[batch]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  check_batching_changes_nothing(Model::load(shared_dir() / "models/stories260K"), 12, 16);
}

TEST_CASE("batched samples prefill exactly as alone: long prompts in small chunks, every allocator", "[batch]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  check_batching_changes_nothing(Model::load(shared_dir() / "models/stories260K"), 13, 12, prefill_trial);
}

TEST_CASE("a forward pass of several groups gives each group's own logits", "[batch]") {
  KVBENCH_REQUIRE_SHARED("models/tiny-qwen3");
  const Model model = Model::load(shared_dir() / "models/tiny-qwen3");
  std::mt19937 rng(5);
  std::uniform_int_distribution<int64_t> token(3, 500);
  // Caches of different lengths; new tokens of different counts (a prefill chunk beside decode steps).
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{9, 1}, {30, 1}, {4, 6}, {17, 1}};
  std::vector<KvCache> alone_caches, group_caches;
  std::vector<StepInput> groups;
  std::vector<at::Tensor> alone_logits;
  for (auto [cached, fresh] : shapes) {
    std::vector<int64_t> ids(cached + fresh);
    for (auto& id : ids) id = token(rng);
    for (auto* caches : {&alone_caches, &group_caches}) {
      caches->emplace_back(cache_shape(model.config()), 1, model.options(), true);
      model.forward(ids_tensor({ids.begin(), ids.begin() + cached}), position_range(0, cached), caches->back());
    }
    const at::Tensor fresh_ids = ids_tensor({ids.begin() + cached, ids.end()});
    alone_logits.push_back(
        model.forward(fresh_ids, position_range(cached, fresh), alone_caches.back(), {true}).logits);
    groups.push_back({fresh_ids, position_range(cached, fresh), nullptr, {true}});
  }
  for (size_t g = 0; g < groups.size(); ++g) groups[g].cache = &group_caches[g];
  const std::vector<ForwardResult> together = model.forward(groups);
  for (size_t g = 0; g < groups.size(); ++g) {
    INFO("group " << g);
    CHECK(at::equal(together[g].logits, alone_logits[g]));
    CHECK(at::equal(group_caches[g].keys(1), alone_caches[g].keys(1)));
    CHECK(at::equal(group_caches[g].last_layer_input(), alone_caches[g].last_layer_input()));
  }
}

TEST_CASE("a sample that finishes early frees its slot for the next sample", "[batch]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const Model model = Model::load(shared_dir() / "models/stories260K");
  const std::vector<int64_t> max_new = {40, 3, 5, 40};
  std::vector<std::unique_ptr<Policy>> policies;
  std::vector<std::unique_ptr<SampleGeneration>> generations;
  for (int64_t n : max_new) {
    policies.push_back(make_policy("sliding"));
    GenerationSettings s;
    s.budget.J = 8;
    s.budget.h = 2;
    s.max_new_tokens = n;
    generations.push_back(std::make_unique<SampleGeneration>(model, *policies.back(), std::vector<int64_t>{1, 403, 407}, s));
  }
  size_t handed = 0;
  std::vector<size_t> finish_order, finished_when_handed;
  generate_continuously(
      model, 2,
      [&]() -> SampleGeneration* {
        finished_when_handed.push_back(finish_order.size());
        return handed < generations.size() ? generations[handed++].get() : nullptr;
      },
      [&](SampleGeneration* g) {
        for (size_t i = 0; i < generations.size(); ++i)
          if (generations[i].get() == g) finish_order.push_back(i);
      });
  // Slots {0, 1}: 1 finishes after 3 tokens and 2 takes its slot; 2 finishes and 3 takes it, while 0 runs on.
  CHECK(finished_when_handed == std::vector<size_t>{0, 0, 1, 2, 3});
  CHECK(finish_order == std::vector<size_t>{1, 2, 0, 3});
}

TEST_CASE("batched samples decode exactly as alone on CUDA (random tiny Qwen3, float32)", "[batch][cuda]") {
  if (cuda_device_count() == 0) {
    WARN("skipped: no CUDA device (" << (KVBENCH_CUDA ? "CUDA compiled in, no GPU visible" : "CUDA not compiled in")
                                     << "); scripts/gpu_check.sh runs this on a GPU machine");
    return;
  }
  const ModelConfig config = tiny_model_config(ModelFamily::Qwen3, 64, 4, 2, 512);
  check_batching_changes_nothing(random_model(config, 3, at::kCUDA, at::kFloat), 13, 16);
}
