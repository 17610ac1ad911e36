#include "policies/anticausal.h"

#include <algorithm>

namespace kvbench {

at::Tensor anticausal_attention_residual(const Model& model, const KvCache& cache, int64_t layer, const at::Tensor& x,
                                         int64_t min_gap, int64_t block_rows) {
  const int64_t n = cache.size();
  const at::Tensor normed = model.rms_norm(x, model.weights().layers[layer].input_norm);
  const at::Tensor keys = cache.keys(layer), values = cache.values(layer);
  const auto long_opts = at::TensorOptions().dtype(at::kLong).device(x.device());
  const at::Tensor columns = at::arange(n, long_opts).unsqueeze(0);
  std::vector<at::Tensor> blocks;
  for (int64_t begin = 0; begin < n; begin += block_rows) {
    const int64_t rows = std::min(block_rows, n - begin);
    const at::Tensor q = model.query(layer, normed.narrow(1, begin, rows), cache.positions().narrow(1, begin, rows));
    const at::Tensor allowed = columns > (at::arange(begin, begin + rows, long_opts) + min_gap).unsqueeze(1);
    blocks.push_back(model.attend(q, keys, values, allowed));
  }
  return model.attention_residual(layer, x, at::cat(blocks, 1));
}

at::Tensor own_token_logits(const Model& model, const KvCache& cache, const at::Tensor& x) {
  // Only the logit of each entry's own token is needed: a row of the LM head per entry, never n × vocab.
  const at::Tensor normed = model.rms_norm(x, model.weights().final_norm).to(at::kFloat);
  const at::Tensor rows = at::embedding(model.weights().lm_head, cache.token_ids()).to(at::kFloat);
  return (normed * rows).sum(-1);
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
