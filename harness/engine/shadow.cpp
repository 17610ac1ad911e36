#include "engine/shadow.h"

namespace kvbench {

double kl_of_logits(const at::Tensor& full, const at::Tensor& policy) {
  const at::Tensor log_p = at::log_softmax(full.to(at::kCPU, at::kDouble), -1);
  const at::Tensor log_q = at::log_softmax(policy.to(at::kCPU, at::kDouble), -1);
  return (log_p.exp() * (log_p - log_q)).sum().item<double>();
}

ShadowCache::ShadowCache(const Model& model) : model_(model), cache_(model.config(), 1, model.options(), false) {}

at::Tensor ShadowCache::feed(const at::Tensor& ids, const at::Tensor& positions) {
  const ForwardResult step = model_.forward({StepInput{ids, positions, &cache_, {}}}).front();
  return step.logits.select(1, step.logits.size(1) - 1);
}

void record_fidelity(StepFidelity& fidelity, const at::Tensor& full, const at::Tensor& policy) {
  fidelity.kl.push_back(static_cast<float>(kl_of_logits(full, policy)));
  fidelity.top1_agree.push_back(full.argmax().item<int64_t>() == policy.argmax().item<int64_t>());
}

}  // namespace kvbench
