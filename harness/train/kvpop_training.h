// Training and evaluating KVpop scorers offline, from full-cache passes of the model over texts:
// targets and boundary pairs (policies/kvpop_targets.h), the pairwise loss, and recall of the
// future-attention oracle's kept set by the learned scorer and by the untrained fallback
// (accumulated attention mass, as the kvpop policy uses without a scorer file).
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "model/model.h"
#include "policies/kvpop_scorer.h"
#include "policies/kvpop_targets.h"

namespace kvbench {

struct KvpopBudget {
  int64_t sinks = 4;   // s: always kept, never candidates
  int64_t window = 32; // w: protected recent tokens
  int64_t k = 64;      // long-range slots chosen by the scorer
};

// One text's full-cache pass: scorer features and targets per layer, optionally the attention.
struct KvpopSequence {
  std::vector<at::Tensor> features;   // per layer [1, KV, S, 2D]
  at::Tensor targets;                 // [L, KV, S]
  // Per layer [KV, S, S]: causal attention probabilities averaged over each KV head's query group
  // (evaluation only: the fallback's accumulated mass needs them).
  std::vector<at::Tensor> attention;
};

KvpopSequence analyse_sequence(const Model& model, const std::vector<int64_t>& ids, const FutureMassSpec& spec,
                               bool keep_attention);

struct ScorerTrainingOptions {
  KvpopScorerShape shape;      // kind and hidden width; layers/heads/dim come from the data
  KvpopBudget budget;
  double temperature = 1.0;    // τ
  int64_t steps = 300;
  int64_t sequences_per_step = 4;
  double lr = 1e-2;
  uint64_t seed = 0;
  int64_t log_every = 0;
};

KvpopScorer train_kvpop_scorer(const std::vector<KvpopSequence>& data, const ScorerTrainingOptions& options);

// Mean recall |kept ∩ oracle| / k over decoding steps (every `stride`-th step with more than k
// candidates), layers, KV heads and sequences; the oracle keeps the top-k candidates by target.
struct RecallReport {
  double learned = 0.0;   // NaN without a scorer
  double fallback = 0.0;  // accumulated attention mass of the queries seen so far
  double recency = 0.0;   // the newest k candidates (a floor any scorer should beat)
  int64_t decisions = 0;  // (step, layer, head, sequence) tuples averaged over
};
RecallReport oracle_recall(const std::vector<KvpopSequence>& data, const KvpopScorer* scorer, const KvpopBudget& budget,
                           int64_t stride);

}  // namespace kvbench
