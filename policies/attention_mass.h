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
  void compact(const at::Tensor& keep) { mass_ = mass_.gather(3, keep.to(mass_.device())); }  // keep [B, L, KV, M]
  void expand_batch(int64_t batch);
  void reset() { mass_ = at::Tensor(); }

 private:
  at::Tensor mass_;
};

}  // namespace kvbench
