#include "cache/kv_cache.h"

#include <algorithm>

#include "common/error.h"

namespace kvbench {

KvCache::KvCache(const CacheShape& shape, int64_t batch, at::TensorOptions options, bool keep_last_layer_input)
    : batch_(batch),
      kv_heads_(shape.kv_heads),
      head_dim_(shape.head_dim),
      hidden_(shape.hidden),
      keep_last_layer_input_(keep_last_layer_input),
      options_(options),
      keys_(shape.layers),
      values_(shape.layers),
      layer_size_(shape.layers, 0),
      padded_(shape.layers, false) {
  reserve(64);
  last_ids_ = at::full({batch}, -1, options.dtype(at::kLong));
}

void KvCache::reserve(int64_t capacity) {
  if (capacity <= capacity_) return;
  auto grow = [&](at::Tensor& storage, at::IntArrayRef shape, int64_t dim, at::TensorOptions opts) {
    at::Tensor fresh = at::empty(shape, opts);
    const int64_t rows = std::max(size_, tokens_) + pending_;
    if (storage.defined() && rows > 0) fresh.narrow(dim, 0, rows).copy_(storage.narrow(dim, 0, rows));
    storage = fresh;
  };
  for (size_t l = 0; l < keys_.size(); ++l) {
    grow(keys_[l], {batch_, kv_heads_, capacity, head_dim_}, 2, options_);
    grow(values_[l], {batch_, kv_heads_, capacity, head_dim_}, 2, options_);
  }
  const auto long_opts = options_.dtype(at::kLong);
  grow(ids_, {batch_, capacity}, 1, long_opts);
  grow(positions_, {batch_, capacity}, 1, long_opts);
  if (keep_last_layer_input_) grow(last_input_, {batch_, capacity, hidden_}, 1, options_);
  for (auto& p : head_positions_) grow(p, {batch_, kv_heads_, capacity}, 2, long_opts);
  capacity_ = capacity;
}

at::Tensor KvCache::used(const at::Tensor& storage, int64_t dim) const { return storage.narrow(dim, 0, size_); }

at::Tensor KvCache::keys(int64_t layer) const { return keys_.at(layer).narrow(2, 0, layer_size_[layer]); }
at::Tensor KvCache::values(int64_t layer) const { return values_.at(layer).narrow(2, 0, layer_size_[layer]); }
at::Tensor KvCache::token_ids() const {
  if (per_head()) fail("KvCache: token ids are per head after per-KV-head compaction");
  return used(ids_, 1);
}

at::Tensor KvCache::positions() const {
  if (per_head()) fail("KvCache: positions are per head after per-KV-head compaction (use head_positions)");
  return used(positions_, 1);
}

at::Tensor KvCache::head_positions(int64_t layer) const {
  if (per_head()) return head_positions_.at(layer).narrow(2, 0, layer_size_[layer]);
  return positions().unsqueeze(1).expand({batch_, kv_heads_, size_});
}

at::Tensor KvCache::head_positions_padded(int64_t layer) const {
  const at::Tensor held = head_positions(layer);
  if (held.size(2) == size_) return held;
  return at::constant_pad_nd(held, {0, size_ - held.size(2)}, -1);
}

at::Tensor KvCache::attention_mask(int64_t layer) const {
  if (!padded_.at(layer)) return at::Tensor();
  const at::Tensor held = head_positions(layer).ge(0);
  return at::cat({held, at::ones({batch_, kv_heads_, pending_}, held.options())}, 2);
}

double KvCache::mean_entries_per_head() const {
  double entries = 0.0;  // per (sequence, head), summed over layers; only padded layers need counting
  for (int64_t l = 0; l < num_layers(); ++l)
    entries += padded_[l] ? head_positions(l).ge(0).sum().item<double>() / static_cast<double>(batch_ * kv_heads_)
                          : static_cast<double>(layer_size_[l]);
  return entries / static_cast<double>(num_layers());
}

int64_t KvCache::bytes_per_sequence() const {
  int64_t slots = 0;
  for (int64_t n : layer_size_) slots += n;
  return 2 * slots * kv_heads_ * head_dim_ * static_cast<int64_t>(options_.dtype().itemsize());
}

at::Tensor KvCache::all_positions() const {
  if (!per_head()) return positions();
  std::vector<at::Tensor> layers;
  for (int64_t l = 0; l < num_layers(); ++l) layers.push_back(head_positions_padded(l));
  return at::stack(layers, 1);
}

at::Tensor KvCache::last_layer_input() const {
  return keep_last_layer_input_ && !per_head() ? used(last_input_, 1) : at::Tensor();
}

void KvCache::require_token_table() const {
  if (per_head() && !ragged_) fail("KvCache: per-KV-head compaction keeps no table of held tokens");
}

int64_t KvCache::held_tokens() const {
  require_token_table();
  return tokens_;
}

at::Tensor KvCache::held_token_ids() const { return ids_.narrow(1, 0, held_tokens()); }
at::Tensor KvCache::held_token_positions() const { return positions_.narrow(1, 0, held_tokens()); }
at::Tensor KvCache::held_last_layer_input() const {
  return keep_last_layer_input_ ? last_input_.narrow(1, 0, held_tokens()) : at::Tensor();
}

void KvCache::relabel_newest(const at::Tensor& ids) {
  if (per_head() || tokens_ == 0) fail("KvCache: relabel_newest needs a token-level cache holding an entry");
  ids_.select(1, tokens_ - 1).copy_(ids);
}

void KvCache::begin_append(int64_t count) {
  if (pending_ != 0) fail("KvCache: begin_append while an append is in progress");
  const int64_t needed = std::max(size_, tokens_) + count;
  if (needed > capacity_) reserve(std::max(needed, 2 * capacity_));
  pending_ = count;
}

std::pair<at::Tensor, at::Tensor> KvCache::append_layer(int64_t layer, const at::Tensor& k, const at::Tensor& v) {
  const int64_t end = layer_size_.at(layer);
  keys_.at(layer).narrow(2, end, pending_).copy_(k);
  values_.at(layer).narrow(2, end, pending_).copy_(v);
  return {keys_[layer].narrow(2, 0, end + pending_), values_[layer].narrow(2, 0, end + pending_)};
}

void KvCache::end_append(const at::Tensor& ids, const at::Tensor& positions, const at::Tensor& last_layer_input) {
  ids_.narrow(1, tokens_, pending_).copy_(ids);
  positions_.narrow(1, tokens_, pending_).copy_(positions);
  for (size_t l = 0; l < head_positions_.size(); ++l)
    head_positions_[l].narrow(2, layer_size_[l], pending_).copy_(positions.unsqueeze(1).expand({batch_, kv_heads_, pending_}));
  if (keep_last_layer_input_) last_input_.narrow(1, tokens_, pending_).copy_(last_layer_input);
  for (int64_t& n : layer_size_) n += pending_;
  if (pending_ > 0) last_ids_.copy_(ids.select(1, ids.size(1) - 1));
  size_ += pending_;
  tokens_ += pending_;
  pending_ = 0;
}

void KvCache::set_keys(int64_t layer, const at::Tensor& keys) {
  if (pending_ != 0) fail("KvCache: set_keys while an append is in progress");
  this->keys(layer).copy_(keys);
}

KvCache KvCache::scratch() const {
  KvCache copy = *this;
  copy.last_ids_ = last_ids_.clone();  // the one piece of state an append changes in place
  return copy;
}

void KvCache::compact(const at::Tensor& keep) {
  if (per_head()) fail("KvCache::compact: the cache is per head; use compact_per_head");
  at::Tensor index = keep.to(ids_.device(), at::kLong);
  if (index.dim() == 1) index = index.unsqueeze(0).expand({batch_, index.size(0)});
  if (index.dim() != 2 || index.size(0) != batch_) fail("KvCache::compact: keep must be [M] or [B, M]");
  const int64_t kept = index.size(1);
  if (kept > 0 && (index.min().item<int64_t>() < 0 || index.max().item<int64_t>() >= size_))
    fail("KvCache::compact: slot index out of range [0, {})", size_);
  // Gather into the front of the same storage (a gathered copy is taken first, so overlap is safe).
  auto gather_into = [&](at::Tensor& storage, int64_t dim, const at::Tensor& idx) {
    at::Tensor kept_rows = used(storage, dim).gather(dim, idx);
    storage.narrow(dim, 0, kept).copy_(kept_rows);
  };
  for (size_t l = 0; l < keys_.size(); ++l) {
    auto idx = index.view({batch_, 1, kept, 1}).expand({batch_, kv_heads_, kept, head_dim_});
    gather_into(keys_[l], 2, idx);
    gather_into(values_[l], 2, idx);
  }
  gather_into(ids_, 1, index);
  gather_into(positions_, 1, index);
  if (keep_last_layer_input_) gather_into(last_input_, 1, index.unsqueeze(-1).expand({batch_, kept, hidden_}));
  size_ = tokens_ = kept;
  std::fill(layer_size_.begin(), layer_size_.end(), kept);
}

void KvCache::compact_per_head(const at::Tensor& keep) {
  const at::Tensor index = keep.to(keys_.front().device(), at::kLong);
  if (index.dim() != 4 || index.size(0) != batch_ || index.size(1) != num_layers() || index.size(2) != kv_heads_)
    fail("KvCache::compact_per_head: keep must be [B, L, KV, M]");
  const int64_t kept = index.size(3);
  if (kept > 0 && (index.min().item<int64_t>() < 0 || index.max().item<int64_t>() >= size_))
    fail("KvCache::compact_per_head: slot index out of range [0, {})", size_);
  if (ragged_) fail("KvCache::compact_per_head: the cache is ragged; use compact_ragged");
  to_per_head(/*keep_token_table=*/false);
  for (int64_t l = 0; l < num_layers(); ++l) {
    const at::Tensor layer_index = index.select(1, l);  // [B, KV, M]
    const at::Tensor rows = layer_index.unsqueeze(-1).expand({batch_, kv_heads_, kept, head_dim_});
    const at::Tensor k = keys(l).gather(2, rows), v = values(l).gather(2, rows);
    const at::Tensor p = head_positions(l).gather(2, layer_index);
    keys_[l].narrow(2, 0, kept).copy_(k);
    values_[l].narrow(2, 0, kept).copy_(v);
    head_positions_[l].narrow(2, 0, kept).copy_(p);
  }
  size_ = tokens_ = kept;  // the token table is dropped: appends write it at the slot end, unused
  std::fill(layer_size_.begin(), layer_size_.end(), kept);
}

void KvCache::to_per_head(bool keep_token_table) {
  if (per_head()) return;  // every head starts from the token-level positions
  const auto long_opts = options_.dtype(at::kLong);
  for (int64_t l = 0; l < num_layers(); ++l) {
    head_positions_.push_back(at::empty({batch_, kv_heads_, capacity_}, long_opts));
    head_positions_.back().narrow(2, 0, size_).copy_(positions_.narrow(1, 0, size_).unsqueeze(1).expand({batch_, kv_heads_, size_}));
  }
  if (keep_token_table) return;
  keep_last_layer_input_ = false;  // H^(L-1) is a per-token quantity
  last_input_ = at::Tensor();
}

void KvCache::compact_ragged(const at::Tensor& keep) {
  const at::Tensor index = keep.to(keys_.front().device(), at::kLong);
  if (index.dim() != 4 || index.size(0) != batch_ || index.size(1) != num_layers() || index.size(2) != kv_heads_)
    fail("KvCache::compact_ragged: keep must be [B, L, KV, M]");
  to_per_head(/*keep_token_table=*/true);
  ragged_ = true;
  for (int64_t l = 0; l < num_layers(); ++l) {
    const at::Tensor held = index.select(1, l).ge(0);  // [B, KV, M]
    const int64_t kept = held.sum(-1).max().item<int64_t>();
    const at::Tensor layer_index = index.select(1, l).narrow(2, 0, kept);
    if (kept > 0 && layer_index.max().item<int64_t>() >= layer_size_[l])
      fail("KvCache::compact_ragged: layer {} slot index out of range [0, {})", l, layer_size_[l]);
    const at::Tensor slots = layer_index.clamp_min(0), padding = held.narrow(2, 0, kept).logical_not();
    const at::Tensor rows = slots.unsqueeze(-1).expand({batch_, kv_heads_, kept, head_dim_});
    const at::Tensor k = keys(l).gather(2, rows), v = values(l).gather(2, rows);
    const at::Tensor p = head_positions(l).gather(2, slots).masked_fill_(padding, -1);
    keys_[l].narrow(2, 0, kept).copy_(k);
    values_[l].narrow(2, 0, kept).copy_(v);
    head_positions_[l].narrow(2, 0, kept).copy_(p);
    layer_size_[l] = kept;
    padded_[l] = padding.any().item<bool>();
  }
  size_ = *std::max_element(layer_size_.begin(), layer_size_.end());
  compact_token_table();
}

// The token table keeps the rows whose position some layer and head still holds, in their order.
void KvCache::compact_token_table() {
  const at::Tensor table = positions_.narrow(1, 0, tokens_);  // [B, U], ascending, -1 padding
  const int64_t unheld = std::max<int64_t>(table.max().item<int64_t>(), 0) + 1;  // a column for -1s
  at::Tensor held = at::zeros({batch_, unheld + 1}, table.options());
  for (int64_t l = 0; l < num_layers(); ++l) {
    const at::Tensor p = head_positions(l).flatten(1);
    held.scatter_(1, p.masked_fill(p.lt(0), unheld), 1);
  }
  held.select(1, unheld).zero_();  // padding (of the layers and of the table) is no token
  const at::Tensor keep = held.gather(1, table.masked_fill(table.lt(0), unheld)).gt(0);
  const at::Tensor row = at::arange(tokens_, table.options());
  const at::Tensor kept_first = std::get<0>(at::where(keep, row, row + tokens_).sort(-1));
  const int64_t kept = keep.sum(-1).max().item<int64_t>();
  const at::Tensor index = kept_first.narrow(1, 0, kept), padding = index.ge(tokens_);
  const at::Tensor rows = index.masked_fill(padding, 0);
  const at::Tensor ids = ids_.narrow(1, 0, tokens_).gather(1, rows);
  const at::Tensor positions = table.gather(1, rows).masked_fill_(padding, -1);
  ids_.narrow(1, 0, kept).copy_(ids);
  positions_.narrow(1, 0, kept).copy_(positions);
  if (keep_last_layer_input_)
    last_input_.narrow(1, 0, kept).copy_(last_input_.narrow(1, 0, tokens_).gather(1, rows.unsqueeze(-1).expand({batch_, kept, hidden_})));
  tokens_ = kept;
}

void KvCache::expand_batch(int64_t batch) {
  auto replicate = [&](at::Tensor& storage) {
    std::vector<int64_t> shape(storage.sizes().begin(), storage.sizes().end());
    shape[0] = batch;
    storage = storage.narrow(0, 0, 1).expand(shape).contiguous();
  };
  for (auto& k : keys_) replicate(k);
  for (auto& v : values_) replicate(v);
  replicate(ids_);
  replicate(positions_);
  replicate(last_ids_);
  if (keep_last_layer_input_) replicate(last_input_);
  for (auto& p : head_positions_) replicate(p);
  batch_ = batch;
}

}  // namespace kvbench
