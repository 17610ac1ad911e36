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
