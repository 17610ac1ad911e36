// Algorithm 3 (the refresh): score every cached entry, keep J of them (plus frozen and recent), compact.
// Phrase rules (engine/score_transforms.h) reshape the scores the allocator ranks; the record keeps the raw ones.
#pragma once
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "engine/score_transforms.h"
#include "policies/policy.h"

namespace kvbench {

struct RefreshRecord {
  std::string phase;              // "prefill" or "decode"
  int64_t step = 0;               // prefill chunk index, or decode step (tokens already fed, 1-based)
  int64_t processed = 0;          // tokens fed to the model so far
  int64_t size_before = 0, size_after = 0;
  at::Tensor positions_before;    // [B, N] or [B, L, KV, N] original positions before the refresh (CPU);
                                  // ragged caches (pyramid, ada): -1 marks padding, N = the widest layer
  at::Tensor scores;              // [B, N] or [B, L, KV, N] float32 (CPU); undefined if the policy has none
  at::Tensor kept_positions;      // [B, M] or [B, L, KV, M] original positions kept (CPU), -1 = padding
  int64_t candidates_begin = 0, candidates_end = 0;  // slots that competed: [begin, end)
  bool rerotated = false;         // the kept keys now sit at positions 0 … size_after − 1 (KeepRule::rerotate)
  // Scoring shared by several samples (refresh_together) records that call's time divided among them.
  double scoring_ms = 0.0, compaction_ms = 0.0;
};

// One sample's refresh: its cache, its own policy instance, its budget and its phrase rules.
struct RefreshJob {
  KvCache& cache;
  Policy& policy;
  const CacheBudget& budget;
  PhraseRules phrase = {};
};

// Algorithm 3 for samples that refresh at the same step (batched decoding): the samples whose policies
// share a name are scored by one Policy::score_together call, then each cache is compacted to its own keep
// set. Each record is the one refresh() gives that sample alone. Records in the order of `jobs`.
std::vector<RefreshRecord> refresh_together(const Model& model, const std::vector<RefreshJob>& jobs);

RefreshRecord refresh(const Model& model, KvCache& cache, Policy& policy, const CacheBudget& budget,
                      const PhraseRules& phrase = {});

}  // namespace kvbench
