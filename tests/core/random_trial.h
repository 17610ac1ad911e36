// Random generation settings for property tests: a policy, a prompt and a budget drawn from `rng`, with what the
// policy needs of its job (PolicyNeeds): a question's window for finch (then --mode prefill_end, as it runs).
// Policies that write prompts of their own (kvzip) need a tokenizer of the model's vocabulary, which the tests'
// tiny models lack: they are not drawn (tests/core/test_kvpress_reference.cpp runs kvzip on SmolLM2).
#pragma once
#include <algorithm>
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

inline Trial random_trial(std::mt19937& rng, std::vector<std::string> policies) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  policies.erase(std::remove_if(policies.begin(), policies.end(),
                                [](const std::string& name) { return make_policy(name)->needs().tokenizer; }),
                 policies.end());
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
  if (make_policy(t.policy)->needs().query_window) {
    t.settings.query_window = pick(1, std::min<int64_t>(8, t.prompt.size() - 1));
    b.mode = CacheBudget::Mode::PrefillEnd;
  }
  t.settings.max_new_tokens = pick(1, 30);
  return t;
}

}  // namespace kvbench::testing
