#include "policies/anticausal.h"

#include <algorithm>
#include <cmath>

namespace kvbench {

namespace {

// Query rows attended at a time: as many as keep one block's float32 scores within a cache-sized budget
// (they are written by one product, then read by the softmax and the next product), but at least enough
// that the products stay efficient (each block reads all of the layer's later keys and values).
constexpr int64_t kScoreBlockBytes = int64_t{4} << 20, kMinBlockRows = 32;

// Attention of `rows` query rows q [B, H, rows, D], entries first … first + rows − 1, each of which has at
// least one allowed key, over the keys/values of entries first + min_gap + 1 … n − 1: [B, rows, H, D].
// In those keys' own coordinates, row r may see key c iff c ≥ r, so only a rows × rows triangle is masked
// and the products left of the block's first allowed key are never computed.
at::Tensor attend_later_entries(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values, int64_t first,
                                int64_t min_gap) {
  const int64_t B = q.size(0), H = q.size(1), rows = q.size(2), D = q.size(3);
  const int64_t KV = keys.size(1), G = H / KV, begin = first + min_gap + 1, N = keys.size(2) - begin;
  // Query heads of one KV group are stacked along the row axis, so one product per KV head serves them all.
  const at::Tensor grouped = q.reshape({B, KV, G * rows, D});
  at::Tensor scores = at::matmul(grouped, keys.narrow(2, begin, N).transpose(-1, -2));
  scores = scores.to(q.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);  // softmax in float32, as Model::attend
  scores.div_(std::sqrt(static_cast<double>(D)));
  const at::Tensor before_key = at::ones({rows, rows}, scores.options().dtype(at::kBool)).tril(-1);
  scores.view({B, KV, G, rows, N}).narrow(-1, 0, rows).masked_fill_(before_key, -std::numeric_limits<double>::infinity());
  const at::Tensor probs = at::softmax(scores, -1).to(values.scalar_type());
  const at::Tensor out = at::matmul(probs, values.narrow(2, begin, N));  // [B, KV, G * rows, D]
  return out.view({B, H, rows, D}).transpose(1, 2);
}

// Row i's own-token logit at its final hidden state x[i] (float32): one LM-head row per entry, never n × vocab.
at::Tensor own_token_logits(const Model& model, const at::Tensor& ids, const at::Tensor& x) {
  const at::Tensor normed = model.rms_norm(x, model.weights().final_norm).to(at::kFloat);
  const at::Tensor rows = at::embedding(model.weights().lm_head, ids).to(at::kFloat);
  return (normed * rows).sum(-1);
}

}  // namespace

at::Tensor anticausal_attention_residual(const Model& model, const KvCache& cache, int64_t layer, const at::Tensor& x,
                                         int64_t min_gap, int64_t first_row, int64_t block_rows) {
  const int64_t B = x.size(0), rows = x.size(1), n = cache.size();
  const ModelConfig& c = model.config();
  const at::Tensor normed = model.rms_norm(x, model.weights().layers[layer].input_norm);
  const at::Tensor q = model.query(layer, normed, cache.positions().narrow(1, first_row, rows));
  const at::Tensor keys = cache.keys(layer), values = cache.values(layer);
  // The newest min_gap + 1 entries have no key to attend to: their attention output is 0.
  const int64_t with_keys = std::clamp<int64_t>(n - min_gap - 1 - first_row, 0, rows);
  if (block_rows <= 0) block_rows = std::max(kMinBlockRows, kScoreBlockBytes / (B * c.num_heads * n * 4));
  at::Tensor attended = at::zeros({B, rows, c.num_heads, c.head_dim}, q.options());
  for (int64_t begin = 0; begin < with_keys; begin += block_rows) {
    const int64_t count = std::min(block_rows, with_keys - begin);
    attended.narrow(1, begin, count)
        .copy_(attend_later_entries(q.narrow(2, begin, count), keys, values, first_row + begin, min_gap));
  }
  return model.attention_residual(layer, x, attended.view({B, rows, c.num_heads * c.head_dim}));
}

at::Tensor anticausal_scores(const Model& model, const KvCache& cache, const at::Tensor& input, int64_t first_layer,
                             bool with_mlp, int64_t min_gap, int64_t pass_rows) {
  const int64_t n = cache.size();
  std::vector<at::Tensor> scores;
  for (int64_t begin = 0; begin < n; begin += pass_rows) {
    const int64_t rows = std::min(pass_rows, n - begin);
    at::Tensor x = input.narrow(1, begin, rows);
    for (int64_t l = first_layer; l < model.config().num_layers; ++l) {
      x = anticausal_attention_residual(model, cache, l, x, min_gap, begin);
      if (with_mlp) x = model.mlp_residual(l, x);
    }
    scores.push_back(own_token_logits(model, cache.token_ids().narrow(1, begin, rows), x));
  }
  return at::cat(scores, 1);
}

double anticausal_pass_flops(const ModelConfig& config, int64_t n, int64_t min_gap, int64_t layers, bool with_mlp) {
  const double hidden = static_cast<double>(config.hidden_size), width = static_cast<double>(config.num_heads * config.head_dim);
  const double m = static_cast<double>(std::max<int64_t>(0, n - min_gap - 1)), pairs = m * (m + 1) / 2;
  const double weights_per_row = 2 * hidden * width + (with_mlp ? 3 * hidden * config.intermediate_size : 0.0);
  const double per_layer = 2 * n * weights_per_row + 4 * width * pairs;
  return layers * per_layer + 2 * n * hidden;
}

KeepRule counter_causal_keep_rule(const CacheBudget& budget) {
  return {/*keep_lowest=*/true, std::max(budget.recent, budget.min_gap + 1), Granularity::Token};
}

}  // namespace kvbench
