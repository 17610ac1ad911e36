// random: a seeded control — uniform scores drawn afresh at every refresh. With the pyramid or ada
// allocator every layer and KV head draws its own ([B, L, KV, N], padding slots included and ignored).
#include <limits>
#include <random>

#include "policies/policy.h"

namespace kvbench {

namespace {
class RandomPolicy final : public Policy {
 public:
  explicit RandomPolicy(uint64_t seed) : seed_(seed), rng_(seed) {}
  std::string name() const override { return "random"; }
  std::string summary() const override { return "seeded random control (`random:seed=N`)"; }
  void reset() override { rng_.seed(seed_); }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, budget.recent, budget.ragged ? Granularity::PerKvHead : Granularity::Token};
  }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  at::Tensor score(const ScoringContext& context) override {
    const KvCache& cache = context.cache;
    at::Tensor scores = context.budget.ragged
                            ? at::empty({cache.batch(), cache.num_layers(), cache.keys(0).size(1), cache.size()}, at::kFloat)
                            : at::empty({cache.batch(), cache.size()}, at::kFloat);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    float* data = scores.data_ptr<float>();
    for (int64_t i = 0; i < scores.numel(); ++i) data[i] = uniform(rng_);
    return scores.to(cache.keys(0).device());  // drawn on the host: the same stream on every device
  }

 private:
  uint64_t seed_;
  std::mt19937_64 rng_;
};
}  // namespace

std::unique_ptr<Policy> make_random_policy(const PolicyOptions& options) {
  return std::make_unique<RandomPolicy>(
      static_cast<uint64_t>(options.knobs.integer("seed", 0, 0, std::numeric_limits<int64_t>::max())));
}

}  // namespace kvbench
