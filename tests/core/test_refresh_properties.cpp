// Invariants of the refresh engine over random budgets, prompts and policies (token level and per
// KV head), determinism, and clear errors for impossible settings.
#include "torch_catch.h"

#include <random>
#include <set>

#include "common/error.h"
#include "engine/budget.h"
#include "engine/generate.h"
#include "model_test_util.h"
#include "random_trial.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

std::vector<int64_t> flat(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

// Every row of a refresh record (one sequence, or one layer/KV head of it).
void check_refresh_rows(const RefreshRecord& r, const CacheBudget& b, const KeepRule& rule) {
  const int64_t n = r.positions_before.size(-1), m = r.kept_positions.size(-1);
  const at::Tensor before = r.positions_before.reshape({-1, n}), kept = r.kept_positions.reshape({-1, m});
  CHECK(m == std::min(n, b.frozen + b.J));  // exactly the budget (every head alike)
  for (int64_t row = 0; row < before.size(0); ++row) {
    const auto all = flat(before[row]), survivors = flat(kept[row]);
    const std::set<int64_t> survivor_set(survivors.begin(), survivors.end());
    CHECK(std::is_sorted(survivors.begin(), survivors.end()));
    CHECK(survivor_set.size() == survivors.size());
    for (int64_t p : survivors) CHECK(std::find(all.begin(), all.end(), p) != all.end());  // positions preserved
    for (int64_t i = 0; i < std::min(b.frozen, n); ++i) CHECK(survivor_set.count(all[i]) == 1);  // frozen stay
    for (int64_t i = std::max<int64_t>(0, n - rule.recent); i < n; ++i) CHECK(survivor_set.count(all[i]) == 1);
  }
}

}  // namespace

TEST_CASE("refresh invariants hold over random budgets, prompts and policies", "[refresh][properties]") {
  KVBENCH_REQUIRE_SHARED("models/tiny-qwen3");
  const Model model = Model::load(shared_dir() / "models/tiny-qwen3");
  std::vector<std::string> policies = policy_names();
  policies.erase(std::find(policies.begin(), policies.end(), "full"));
  std::mt19937 rng(2026);
  for (int trial = 0; trial < 60; ++trial) {
    Trial t = random_trial(rng, policies);
    t.policy = with_test_files(t.policy, model);
    const CacheBudget& b = t.settings.budget;
    INFO("trial " << trial << ": " << t.policy << " P=" << t.prompt.size() << " J=" << b.J << " h=" << b.h
                  << " recent=" << b.recent << " frozen=" << b.frozen << " min_gap=" << b.min_gap << " sinks=" << b.sinks
                  << (b.mode == CacheBudget::Mode::Chunked ? " chunked" : " prefill_end"));
    auto policy = make_seeded_policy(t.policy, trial);
    const KeepRule rule = policy->keep_rule(b);
    if (rule.recent > b.J || rule.sinks + rule.recent > b.J) continue;  // rejected by validate (tested below)
    const GenerationResult result = generate(model, *policy, t.prompt, t.settings);
    const int64_t P = t.prompt.size();
    // Attention never sees more than frozen + J + h entries. prefill_end: the whole prompt once, then at most
    // frozen + J entries grow by one a decode step, never refreshed again (as the paper's code runs it).
    const int64_t fed = static_cast<int64_t>(result.rollouts[0].generated.size()) - 1;
    const int64_t bound = b.mode == CacheBudget::Mode::Chunked
                              ? b.frozen + b.J + b.h
                              : std::max(P, std::min(P, b.frozen + b.J) + fed);
    CHECK(result.peak_cache_size <= bound);
    if (b.mode == CacheBudget::Mode::PrefillEnd) CHECK(result.refreshes.size() <= 1);
    for (const auto& r : result.refreshes) check_refresh_rows(r, b, rule);
    // Same settings and seed ⇒ the same tokens and the same kept positions.
    auto again = make_seeded_policy(t.policy, trial);
    const GenerationResult repeat = generate(model, *again, t.prompt, t.settings);
    CHECK(repeat.rollouts[0].generated == result.rollouts[0].generated);
    REQUIRE(repeat.refreshes.size() == result.refreshes.size());
    for (size_t i = 0; i < result.refreshes.size(); ++i)
      CHECK(at::equal(repeat.refreshes[i].kept_positions, result.refreshes[i].kept_positions));
  }
}

TEST_CASE("per-KV-head policies keep different entries in different heads", "[refresh][properties]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const Model model = Model::load(shared_dir() / "models/stories260K");
  for (const char* name : {"h2o-true", "kvpop"}) {
    auto policy = make_policy(name);
    GenerationSettings s;
    s.budget.J = 16;
    s.budget.h = 8;
    s.budget.recent = 4;
    s.max_new_tokens = 40;
    const GenerationResult result = generate(model, *policy, {1, 403, 407, 261, 378}, s);
    REQUIRE(!result.refreshes.empty());
    const at::Tensor kept = result.refreshes.back().kept_positions[0];  // [L, KV, M]
    REQUIRE(kept.dim() == 3);
    CHECK(kept.size(0) == model.config().num_layers);
    CHECK(kept.size(1) == model.config().num_kv_heads);
    // Not all heads agree (otherwise per-head eviction would be token-level in disguise).
    CHECK_FALSE(at::equal(kept[0][0], kept[model.config().num_layers - 1][1]));
  }
}

TEST_CASE("sampled rollouts: same seed, same tokens, rollouts differ from each other", "[generate]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const Model model = Model::load(shared_dir() / "models/stories260K");
  auto policy = make_policy("counter-causal-fast");
  GenerationSettings s;
  s.budget.J = 16;
  s.budget.h = 4;
  s.max_new_tokens = 30;
  s.rollouts = 4;
  s.sampling = {1.0, 0.9, 0, 7};
  const auto a = generate(model, *policy, {1, 403, 407, 261, 378}, s);
  const auto b = generate(model, *policy, {1, 403, 407, 261, 378}, s);
  for (int r = 0; r < 4; ++r) CHECK(a.rollouts[r].generated == b.rollouts[r].generated);
  CHECK(a.rollouts[0].generated != a.rollouts[1].generated);
  // Rollout r of a batch equals the same rollout decoded alone (batching changes nothing).
  GenerationSettings single = s;
  single.rollouts = 1;
  CHECK(generate(model, *policy, {1, 403, 407, 261, 378}, single).rollouts[0].generated == a.rollouts[0].generated);
}

TEST_CASE("impossible settings are rejected with a clear error", "[generate][errors]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const Model model = Model::load(shared_dir() / "models/stories260K");
  auto run = [&](const std::string& policy_name, CacheBudget b, int64_t prompt_len = 10) {
    GenerationSettings s;
    s.budget = b;
    s.max_new_tokens = 4;
    auto policy = make_policy(policy_name);
    generate(model, *policy, std::vector<int64_t>(prompt_len, 5), s);
  };
  CacheBudget ok;
  ok.J = 8;
  ok.h = 2;
  CHECK_NOTHROW(run("sliding", ok));
  CacheBudget b = ok;
  b.J = 0;
  CHECK_THROWS_WITH(run("sliding", b), Catch::Contains("J"));
  b = ok;
  b.h = 0;
  CHECK_THROWS_WITH(run("sliding", b), Catch::Contains("h"));
  b = ok;
  b.recent = 8;
  CHECK_THROWS_WITH(run("h2o", b), Catch::Contains("recent"));
  b = ok;
  b.frozen = 10;
  CHECK_THROWS_WITH(run("importance", b), Catch::Contains("frozen"));
  b = ok;
  b.min_gap = 8;
  CHECK_THROWS_WITH(run("counter-causal", b), Catch::Contains("newest 9"));
  CHECK_THROWS_WITH(make_policy("lru"), Catch::Contains("unknown policy \"lru\""));
}

TEST_CASE("every policy runs or refuses clearly when J is below the sinks (a refresh before any query past them)",
          "[generate][errors]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const Model model = Model::load(shared_dir() / "models/stories260K");
  GenerationSettings s;
  s.budget.J = 2;
  s.budget.h = 1;
  s.budget.sinks = 4;
  s.max_new_tokens = 4;
  for (const std::string& name : policy_names()) {
    INFO(name);
    auto policy = make_policy(name);
    try {
      generate(model, *policy, std::vector<int64_t>(10, 5), s);
    } catch (const kvbench::Error&) {  // a refusal that names the setting is an answer too; anything else fails
    }
  }
}
