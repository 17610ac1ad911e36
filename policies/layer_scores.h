// Per-head scorers (knorm, keydiff, kvpop's learned scorer) score each layer's entries on their own; this
// stacks their scores as [B, L, KV, N] for a uniform or ragged cache, so each policy file holds only its rule.
#pragma once
#include <ATen/ATen.h>

#include <functional>

#include "cache/kv_cache.h"
#include "model/model.h"

namespace kvbench {

// `score_layer(layer, positions)` gets the layer's original positions [B, KV, N_l] (-1: a ragged cache's
// padding) and returns [B, KV, N_l] scores; padding slots and the slots past a narrower layer's end get 0,
// which the allocator never ranks.
at::Tensor score_each_layer(const KvCache& cache,
                            const std::function<at::Tensor(int64_t layer, const at::Tensor& positions)>& score_layer);

}  // namespace kvbench

namespace kvbench {

// For rules that read a head's entries as one sequence in slot order (partitions, windows, chunks of kvpress's
// prefill presses): calls `score_rows` with `rows`, tensors [B, KV, N_l, ...] of one layer, all at once for a
// uniform cache, and for a ragged one once per (sequence, KV head) with that head's held entries alone
// ([1, 1, n, ...]), so padding is never part of a sequence. Returns [B, KV, N_l] float32 (0 at padding).
using RowsRule = std::function<at::Tensor(const std::vector<at::Tensor>& rows)>;
at::Tensor score_held_sequences(const at::Tensor& positions, const std::vector<at::Tensor>& rows,
                                const RowsRule& score_rows);

// x [B, heads, N, D] rotated to positions [B, heads, N] (each head its own), as Model::rope rotates one row of
// positions per sequence; rope_per_head(model, keys, −positions) gives a cache's keys before RoPE.
at::Tensor rope_per_head(const Model& model, const at::Tensor& x, const at::Tensor& positions);

// kvpress's z-normalisation of a layer's scores [B, KV, N], per sequence over all its heads and entries.
at::Tensor z_scores(const at::Tensor& scores);

}  // namespace kvbench
