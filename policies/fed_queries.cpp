#include "policies/fed_queries.h"

#include "policies/layer_scores.h"

namespace kvbench {

void FedQueries::observe(const ForwardResult& step) {
  layers_.resize(step.queries.size());
  for (size_t l = 0; l < step.queries.size(); ++l) layers_[l].push_back(step.queries[l]);
}

at::Tensor FedQueries::held(const Model& model, int64_t layer, const at::Tensor& positions) {
  std::vector<at::Tensor>& pieces = layers_.at(layer);
  if (pieces.size() > 1) pieces = {at::cat(pieces, 2)};  // once per refresh, not once per decode step
  const at::Tensor& all = pieces.front();  // [B, H, fed, D]: a token's position is its index
  const int64_t B = positions.size(0), KV = positions.size(1), N = positions.size(2);
  const int64_t H = all.size(1), D = all.size(3), group = H / KV;
  const at::Tensor at_positions = positions.to(all.device()).repeat_interleave(group, 1);  // [B, H, N]
  const at::Tensor index = at_positions.clamp_min(0).unsqueeze(-1).expand({B, H, N, D});
  const at::Tensor rotated = rope_per_head(model, all.expand({B, H, all.size(2), D}).gather(2, index), at_positions);
  return rotated.view({B, KV, group, N, D}).permute({0, 1, 3, 2, 4});
}

void FedQueries::expand_batch(int64_t batch) {
  for (std::vector<at::Tensor>& pieces : layers_)
    for (at::Tensor& piece : pieces) piece = piece.expand({batch, piece.size(1), piece.size(2), piece.size(3)});
}

}  // namespace kvbench
