// Per-head scorers (knorm, keydiff, kvpop's learned scorer) score each layer's entries on their own; this
// stacks their scores as [B, L, KV, N] for a uniform or ragged cache, so each policy file holds only its rule.
#pragma once
#include <ATen/ATen.h>

#include <functional>

#include "cache/kv_cache.h"

namespace kvbench {

// `score_layer(layer, positions)` gets the layer's original positions [B, KV, N_l] (-1: a ragged cache's
// padding) and returns [B, KV, N_l] scores; padding slots and the slots past a narrower layer's end get 0,
// which the allocator never ranks.
at::Tensor score_each_layer(const KvCache& cache,
                            const std::function<at::Tensor(int64_t layer, const at::Tensor& positions)>& score_layer);

}  // namespace kvbench
