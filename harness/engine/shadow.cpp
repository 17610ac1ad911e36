#include "engine/shadow.h"

namespace kvbench {

double kl_of_logits(const at::Tensor& full, const at::Tensor& policy) {
  const at::Tensor log_p = at::log_softmax(full.to(at::kCPU, at::kDouble), -1);
  const at::Tensor log_q = at::log_softmax(policy.to(at::kCPU, at::kDouble), -1);
  return (log_p.exp() * (log_p - log_q)).sum().item<double>();
}

ShadowCache::ShadowCache(const Model& model) : model_(model), cache_(model.config(), 1, model.options(), false) {}

ShadowStep ShadowCache::feed(const at::Tensor& ids, const at::Tensor& positions, bool attention) {
  StepInput input{ids, positions, &cache_, {}};
  if (attention) input.options.attention = AttentionCapture::AllLayers;
  ForwardResult step = model_.forward({input}).front();
  return {step.logits.select(1, step.logits.size(1) - 1), std::move(step.attention)};
}

void record_fidelity(StepFidelity& fidelity, const at::Tensor& full, const at::Tensor& policy) {
  fidelity.kl.push_back(static_cast<float>(kl_of_logits(full, policy)));
  fidelity.top1_agree.push_back(full.argmax().item<int64_t>() == policy.argmax().item<int64_t>());
}

namespace {

// [B, KV, N] true where the policy's (layer, KV head) does not hold original position 0..N−1.
at::Tensor absent_positions(const KvCache& policy_cache, int64_t layer, int64_t N, at::Device device) {
  const at::Tensor held_positions = policy_cache.head_positions(layer).to(device);  // -1: padding
  const at::Tensor slot = held_positions.masked_fill(held_positions < 0, N);        // padding → a spare column
  at::Tensor held = at::zeros({slot.size(0), slot.size(1), N + 1}, at::TensorOptions(device).dtype(at::kBool));
  held.scatter_(2, slot, true);
  return held.narrow(2, 0, N).logical_not();
}

}  // namespace

at::Tensor attention_on_absent(const std::vector<at::Tensor>& full_attention, const KvCache& policy_cache) {
  std::vector<at::Tensor> layers;
  for (size_t l = 0; l < full_attention.size(); ++l) {
    const at::Tensor& probs = full_attention[l];  // [B, H, T, N]
    const int64_t heads = probs.size(1), N = probs.size(3);
    const at::Tensor absent = absent_positions(policy_cache, static_cast<int64_t>(l), N, probs.device());
    // GQA: query head h reads KV head h / (H / KV).
    const at::Tensor absent_per_query_head = absent.repeat_interleave(heads / absent.size(1), 1).unsqueeze(2);
    const at::Tensor lost = (probs.to(at::kDouble) * absent_per_query_head).sum(-1);  // [B, H, T]
    layers.push_back(lost.mean(1));
  }
  return at::stack(layers, -1).cpu();
}

}  // namespace kvbench
