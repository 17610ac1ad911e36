// KVpop's learned retention scorer: one score per cache entry from its key and value, per layer and
// KV head. Trained by `kvbench train-scorer`; loaded by the kvpop policy with --scorer FILE.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "model/model.h"

namespace kvbench {

class RetentionScorer {
 public:
  virtual ~RetentionScorer() = default;
  // keys (post-RoPE), values [B, KV, N, D] of one layer at original positions [B, KV, N] (or [B, N],
  // the same for every head) → scores [B, KV, N] (higher = keep). The model supplies RoPE, so a
  // scorer can read keys independently of their position.
  virtual at::Tensor score(const Model& model, int64_t layer, const at::Tensor& keys, const at::Tensor& values,
                           const at::Tensor& positions) const = 0;
};

// A scorer file written by `kvbench train-scorer` (see train/kvpop_scorer.h).
std::unique_ptr<RetentionScorer> load_retention_scorer(const std::string& path);

}  // namespace kvbench
