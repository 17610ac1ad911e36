#include "policies/layer_scores.h"

#include <vector>

namespace kvbench {

at::Tensor score_each_layer(const KvCache& cache,
                            const std::function<at::Tensor(int64_t layer, const at::Tensor& positions)>& score_layer) {
  std::vector<at::Tensor> layers;
  for (int64_t l = 0; l < cache.num_layers(); ++l) {
    const at::Tensor positions = cache.head_positions(l);  // [B, KV, N_l]
    const at::Tensor scores = score_layer(l, positions);
    layers.push_back(cache.ragged() ? at::constant_pad_nd(scores.masked_fill(positions.lt(0), 0.0),
                                                          {0, cache.size() - positions.size(2)})
                                    : scores);
  }
  return at::stack(layers, 1);
}

}  // namespace kvbench

namespace kvbench {

at::Tensor score_held_sequences(const at::Tensor& positions, const std::vector<at::Tensor>& rows,
                                const RowsRule& score_rows) {
  if (!positions.lt(0).any().item<bool>()) return score_rows(rows).to(at::kFloat);
  const int64_t B = positions.size(0), KV = positions.size(1);
  at::Tensor scores = at::zeros(positions.sizes(), positions.options().dtype(at::kFloat));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < KV; ++k) {
      const at::Tensor held = positions[b][k].ge(0).nonzero().flatten();
      if (held.numel() == 0) continue;
      std::vector<at::Tensor> row;
      for (const at::Tensor& t : rows) row.push_back(t[b][k].index_select(0, held.to(t.device())).unsqueeze(0).unsqueeze(0));
      scores[b][k].index_copy_(0, held, score_rows(row).flatten().to(scores.options()));
    }
  return scores;
}

at::Tensor rope_per_head(const Model& model, const at::Tensor& x, const at::Tensor& positions) {
  const int64_t B = x.size(0), heads = x.size(1), N = x.size(2), D = x.size(3);
  const at::Tensor rows = x.reshape({B * heads, 1, N, D});
  return model.rope(rows, positions.reshape({B * heads, N}).to(x.device())).view({B, heads, N, D});
}

at::Tensor z_scores(const at::Tensor& scores) {
  const at::Tensor flat = scores.flatten(1);
  const at::Tensor mean = flat.mean(1), spread = flat.std(1).clamp_min(1e-6);
  return (scores - mean.view({-1, 1, 1})) / spread.view({-1, 1, 1});
}

}  // namespace kvbench
