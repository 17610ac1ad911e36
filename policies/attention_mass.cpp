#include "policies/attention_mass.h"

#include <algorithm>

namespace kvbench {

void AttentionMass::add(const ForwardResult& step, int64_t kv_heads) {
  std::vector<at::Tensor> per_layer;
  int64_t widest = 0;  // layers of a ragged cache differ in size: shorter ones are padded with 0
  for (const at::Tensor& probs : step.attention) widest = std::max(widest, probs.size(3));
  for (const at::Tensor& probs : step.attention) {  // [B, H, T, N]
    const int64_t B = probs.size(0), H = probs.size(1), T = probs.size(2), N = probs.size(3);
    per_layer.push_back(at::constant_pad_nd(probs.view({B, kv_heads, H / kv_heads, T, N}).sum(3).mean(2), {0, widest - N}));
  }
  const at::Tensor increment = at::stack(per_layer, 1);  // [B, L, KV, N]
  if (mass_.defined() && mass_.size(0) == increment.size(0)) {
    const int64_t grown = increment.size(3) - mass_.size(3);
    mass_ = at::cat({mass_, at::zeros({mass_.size(0), mass_.size(1), mass_.size(2), grown}, mass_.options())}, 3);
    mass_ += increment;
  } else {
    mass_ = increment.clone();
  }
}

void AttentionMass::compact(const at::Tensor& keep) {
  const at::Tensor slots = keep.to(mass_.device());
  mass_ = mass_.gather(3, slots.clamp_min(0)).masked_fill_(slots.lt(0), 0.0);
}

void AttentionMass::expand_batch(int64_t batch) {
  if (mass_.defined()) mass_ = mass_.expand({batch, mass_.size(1), mass_.size(2), mass_.size(3)}).contiguous();
}

}  // namespace kvbench
