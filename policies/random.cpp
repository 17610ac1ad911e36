// random: a seeded control — uniform scores drawn afresh at every refresh.
#include <random>

#include "policies/policy.h"

namespace kvbench {

namespace {
class RandomPolicy final : public Policy {
 public:
  explicit RandomPolicy(uint64_t seed) : seed_(seed), rng_(seed) {}
  std::string name() const override { return "random"; }
  void reset() override { rng_.seed(seed_); }
  at::Tensor score(const ScoringContext& context) override {
    at::Tensor scores = at::empty({context.cache.batch(), context.cache.size()}, at::kFloat);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    float* data = scores.data_ptr<float>();
    for (int64_t i = 0; i < scores.numel(); ++i) data[i] = uniform(rng_);
    return scores;
  }

 private:
  uint64_t seed_;
  std::mt19937_64 rng_;
};
}  // namespace

std::unique_ptr<Policy> make_random_policy(const PolicyOptions& options) {
  return std::make_unique<RandomPolicy>(options.seed);
}

}  // namespace kvbench
