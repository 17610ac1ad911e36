// KVpop's learned retention scorer: one score per cache entry from its key and value, per layer and
// KV head. Trained by `kvbench train-scorer`; loaded by the kvpop policy with --scorer FILE.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "model/model.h"

namespace kvbench {

// A stateful scorer's view of one generation: it sees every token once, in order, as it enters the
// cache, and scores it later (KVpop's mLSTM: when it leaves the protected window).
class ScorerStream {
 public:
  virtual ~ScorerStream() = default;
  // One layer's new entries: post-RoPE keys and values [B, KV, T, D] at positions [B, KV, T], in order.
  virtual void append(const Model& model, int64_t layer, const at::Tensor& keys, const at::Tensor& values,
                      const at::Tensor& positions) = 0;
  // Scores [B, KV, N] of the entries at `positions` [B, KV, N]; entries not scored yet (still inside
  // the scorer's delay) get a score above any other, so they are kept.
  virtual at::Tensor scores(int64_t layer, const at::Tensor& positions) const = 0;
  virtual void expand_batch(int64_t batch) = 0;
};

class RetentionScorer {
 public:
  virtual ~RetentionScorer() = default;
  // Stateful scorers return a fresh stream per generation; stateless ones (the default) score the
  // cache's contents at each refresh with score().
  virtual std::unique_ptr<ScorerStream> stream() const { return nullptr; }
  // keys (post-RoPE), values [B, KV, N, D] of one layer at original positions [B, KV, N] (or [B, N],
  // the same for every head) → scores [B, KV, N] (higher = keep). The model supplies RoPE, so a
  // scorer can read keys independently of their position.
  virtual at::Tensor score(const Model& model, int64_t layer, const at::Tensor& keys, const at::Tensor& values,
                           const at::Tensor& positions) const = 0;
};

// A scorer file written by `kvbench train-scorer` (see policies/kvpop_scorer.h).
std::unique_ptr<RetentionScorer> load_retention_scorer(const std::string& path);

}  // namespace kvbench
