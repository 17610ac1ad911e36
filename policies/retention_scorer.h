// KVpop's learned retention scorer: one score per cache entry from its key and value, per layer and
// KV head. Trained by `kvbench train-scorer`; loaded by the kvpop policy with --scorer FILE.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <string>

namespace kvbench {

class RetentionScorer {
 public:
  virtual ~RetentionScorer() = default;
  // keys, values [B, KV, N, D] of one layer → scores [B, KV, N] (higher = keep).
  virtual at::Tensor score(int64_t layer, const at::Tensor& keys, const at::Tensor& values) const = 0;
};

std::unique_ptr<RetentionScorer> load_retention_scorer(const std::string& path);

}  // namespace kvbench
