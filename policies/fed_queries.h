// The queries, before RoPE, of every token fed so far, kept per layer by position: what the presses that
// score entries with the prompt's own queries (kvpress's NonCausalAttnPress, CompactorPress) read for the
// entries a cache still holds, after any refresh.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "model/model.h"

namespace kvbench {

class FedQueries {
 public:
  // Appends a forward's queries (PolicyNeeds::step_queries: per layer [B, H, T, D]).
  void observe(const ForwardResult& step);
  // Layer `layer`'s queries of the entries at `positions` [B, KV, N] (-1: padding, any query), rotated to their
  // positions, by KV head: [B, KV, N, group, D].
  at::Tensor held(const Model& model, int64_t layer, const at::Tensor& positions);
  void expand_batch(int64_t batch);
  void reset() { layers_.clear(); }

 private:
  std::vector<std::vector<at::Tensor>> layers_;  // per layer, the forwards' queries [B, H, T, D] in order
};

}  // namespace kvbench
