// Attention mass that real queries paid to each cache entry, accumulated step by step per layer and
// KV head (query heads of a GQA group averaged). Shared by h2o-true and kvpop's untrained scorer.
#pragma once
#include <ATen/ATen.h>

#include "model/model.h"

namespace kvbench {

class AttentionMass {
 public:
  // step.attention holds every layer's [B, H, T, N] probabilities; entries new since the last call start at 0.
  void add(const ForwardResult& step, int64_t kv_heads);
  const at::Tensor& value() const { return mass_; }  // [B, L, KV, N] float32
  // keep [B, L, KV, M]; -1 (a ragged cache's padding) gets 0, so a later entry in that slot starts at 0.
  void compact(const at::Tensor& keep);
  void expand_batch(int64_t batch);
  void reset() { mass_ = at::Tensor(); }

 private:
  at::Tensor mass_;
};

}  // namespace kvbench
