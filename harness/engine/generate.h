// Algorithm 1 (the generate loop) and Algorithm 2 (a step) of the counter-causal paper, for any policy.
//
//   prefill: the prompt in chunks of h at positions 0..P−1, a refresh after each chunk while the
//            cache holds more than J + frozen entries (mode prefill_end: one pass, one refresh);
//   decode:  token 1 is chosen from the prompt's last logits; at step s = 1, 2, … the previous token
//            is fed at position P+s−1, a refresh runs when (P+s) % h == 0, and the next token is
//            chosen from the logits computed *before* that refresh.
#pragma once
#include <string>
#include <vector>

#include "engine/refresh.h"
#include "engine/sampler.h"
#include "policies/policy.h"

namespace kvbench {

struct GenerationSettings {
  CacheBudget budget;
  SamplingParams sampling;
  int64_t max_new_tokens = 256;
  int64_t rollouts = 1;              // sequences decoded together from one prefilled prompt
  std::vector<int64_t> eos_ids;
};

struct RolloutResult {
  std::vector<int64_t> generated;
  std::string stop_reason;  // "eos", "stop", "max_tokens"
};

struct GenerationResult {
  std::vector<int64_t> prompt;
  std::vector<RolloutResult> rollouts;
  std::vector<RefreshRecord> refreshes;
  double mean_cache_size = 0.0;  // realised cache size seen by decode steps
  int64_t peak_cache_size = 0;
  double prefill_seconds = 0.0, decode_seconds = 0.0;
};

// Throws kvbench::Error on impossible settings (J ≤ 0, h ≤ 0, recent ≥ J, frozen ≥ prompt length, ...).
void validate(const GenerationSettings& settings, int64_t prompt_length, const Policy& policy);

GenerationResult generate(const Model& model, Policy& policy, const std::vector<int64_t>& prompt,
                          const GenerationSettings& settings, const StopCheck& stop = {});

}  // namespace kvbench
