// KvCache: per-layer post-RoPE keys/values plus, per entry, its token id and original position, and
// optionally H^(L-1) (the last layer's input, for counter-causal-fast). Entries can be compacted to
// any subset: that is all eviction needs. A batch dimension holds independent sequences (rollouts).
//
// Token-level compaction keeps the same entries in every layer and head. Per-KV-head compaction lets
// each (layer, KV head) keep its own entries (same count, so tensors stay rectangular): the cache
// then tracks original positions per head, and token ids / H^(L-1) no longer describe a slot.
//
// Ragged compaction (the pyramid and ada allocators, engine/allocator.h) lets layers hold different
// numbers of slots (N_l) and, within a layer, heads hold different numbers of entries: a layer is padded
// to its fullest head with slots whose original position is -1. Padding is never attended (see
// attention_mask) and stays until the next compaction; appends go after each layer's own last slot.
//
// Storage grows geometrically so appending a token costs O(1) amortised copies, not O(n).
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "cache/cache_shape.h"

namespace kvbench {

class KvCache {
 public:
  KvCache(const CacheShape& shape, int64_t batch, at::TensorOptions options, bool keep_last_layer_input);

  // Slots of the widest layer (every layer outside ragged mode); size(layer): that layer's slots.
  int64_t size() const { return size_; }
  int64_t size(int64_t layer) const { return layer_size_.at(layer); }
  int64_t batch() const { return batch_; }
  int64_t num_layers() const { return static_cast<int64_t>(keys_.size()); }
  bool keeps_last_layer_input() const { return keep_last_layer_input_; }

  at::Tensor keys(int64_t layer) const;    // [B, KV, N, D]
  at::Tensor values(int64_t layer) const;  // [B, KV, N, D]
  bool per_head() const { return !head_positions_.empty(); }
  at::Tensor token_ids() const;            // [B, N] int64 (token level only)
  at::Tensor positions() const;            // [B, N] int64, original positions (token level only)
  at::Tensor head_positions(int64_t layer) const;  // [B, KV, N_l] original positions (-1: padding), either level
  // [B, KV, size()]: head_positions(layer) padded with -1 up to the widest layer (per-head scores stack).
  at::Tensor head_positions_padded(int64_t layer) const;
  at::Tensor all_positions() const;        // [B, N] token level, [B, L, KV, N] per head (-1: padding)
  bool ragged() const { return ragged_; }
  // While appending (after append_layer): [B, KV, N_l + T] true where a slot holds an entry; undefined
  // when the layer has no padding, so attention runs unmasked exactly as before ragged caches existed.
  at::Tensor attention_mask(int64_t layer) const;
  // Entries held (padding excluded) per sequence, layer and KV head, averaged: the realised cache size.
  double mean_entries_per_head() const;
  // Bytes of keys and values one sequence holds in its slots (padding included: it occupies memory).
  int64_t bytes_per_sequence() const;
  at::Tensor last_layer_input() const;     // [B, N, hidden]; undefined unless kept (token level only)
  // The tokens any layer holds, ascending by position: ids [B, U], positions [B, U], H^(L-1) [B, U, hidden]
  // (undefined unless kept). Token level: the cache's entries (U = size()). Ragged: the union over every
  // layer and head; sequences whose unions are shorter are padded at the end with position -1. Not kept
  // after per-KV-head compaction (kvbench::Error).
  int64_t held_tokens() const;
  at::Tensor held_token_ids() const;
  at::Tensor held_token_positions() const;
  at::Tensor held_last_layer_input() const;
  // The newest token appended to each sequence [B] (−1 before any), whether or not eviction kept it:
  // the key smear (Model::smear_keys) reads the previous token of every new one.
  at::Tensor last_token_ids() const { return last_ids_; }

  // The forward pass appends T entries: begin_append(T), then per layer append_layer (which returns
  // the layer's keys/values including the new entries), then end_append with the entries' metadata.
  void begin_append(int64_t count);
  std::pair<at::Tensor, at::Tensor> append_layer(int64_t layer, const at::Tensor& k, const at::Tensor& v);
  void end_append(const at::Tensor& ids, const at::Tensor& positions, const at::Tensor& last_layer_input);

  // The newest entry of each sequence takes the id ids[b] (token level): the paper's code labels a decode
  // step's entry with the token predicted from it (ReferenceQuirks::predicted_ids, engine/generate.h).
  void relabel_newest(const at::Tensor& ids);

  // Keep only the given slots: `keep` is [M] (same slots for every sequence) or [B, M], ascending.
  void compact(const at::Tensor& keep);
  // Each layer and KV head keeps its own slots: `keep` is [B, L, KV, M], ascending along M.
  void compact_per_head(const at::Tensor& keep);
  // Ragged: `keep` is [B, L, KV, M], each row's slots ascending then -1 padding; layer l keeps as many
  // slots as its fullest row (shorter rows are padded).
  void compact_ragged(const at::Tensor& keep);
  // Replicate sequence 0 into `batch` sequences (rollouts sharing a prefilled prompt).
  void expand_batch(int64_t batch);
  // Layer `layer`'s keys become `keys` [B, KV, size(layer), D] (key rerotation moves the kept keys to new positions).
  void set_keys(int64_t layer, const at::Tensor& keys);
  // A cache that runs further tokens against this one's entries without changing it (kvzip's reconstruction
  // passes): it shares the entries' storage, and what it appends lands past them, where this cache never reads.
  KvCache scratch() const;

 private:
  void reserve(int64_t capacity);
  at::Tensor used(const at::Tensor& storage, int64_t dim) const;
  void to_per_head(bool keep_token_table);
  void compact_token_table();
  void require_token_table() const;

  int64_t batch_, kv_heads_, head_dim_, hidden_;
  bool keep_last_layer_input_;
  at::TensorOptions options_;
  int64_t size_ = 0, pending_ = 0, capacity_ = 0;
  int64_t tokens_ = 0;                     // rows of the token table (ids_, positions_, last_input_): size_ unless ragged
  std::vector<int64_t> layer_size_;        // slots per layer (all size_ unless ragged)
  std::vector<bool> padded_;               // per layer: some slot holds no entry
  bool ragged_ = false;
  std::vector<at::Tensor> keys_, values_;  // [B, KV, capacity, D]
  at::Tensor ids_, positions_;             // [B, capacity]
  at::Tensor last_ids_;                    // [B]
  at::Tensor last_input_;                  // [B, capacity, hidden]
  std::vector<at::Tensor> head_positions_; // per layer [B, KV, capacity]; empty while token level
};

}  // namespace kvbench
