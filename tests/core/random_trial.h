// Random generation settings for property tests: a policy, a prompt and a budget drawn from `rng`.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "engine/generate.h"

namespace kvbench::testing {

struct Trial {
  std::string policy;
  std::vector<int64_t> prompt;
  GenerationSettings settings;
};

inline Trial random_trial(std::mt19937& rng, const std::vector<std::string>& policies) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Trial t;
  t.policy = policies[pick(0, policies.size() - 1)];
  for (int64_t i = 0, n = pick(2, 70); i < n; ++i) t.prompt.push_back(pick(3, 511));
  CacheBudget& b = t.settings.budget;
  b.J = pick(6, 40);
  b.h = pick(1, b.J);
  b.min_gap = pick(0, 2);
  b.recent = pick(0, b.J - b.min_gap - 1);
  b.frozen = pick(0, std::min<int64_t>(5, t.prompt.size() - 1));
  b.sinks = pick(0, std::max<int64_t>(b.J - b.recent - 1, 0) / 2);
  b.mode = pick(0, 3) == 0 ? CacheBudget::Mode::PrefillEnd : CacheBudget::Mode::Chunked;
  t.settings.max_new_tokens = pick(1, 30);
  return t;
}

}  // namespace kvbench::testing
