// `--shadow full`: a full-cache twin of one sample's generation, teacher-forced with the policy's own
// tokens (fed the same ids at the same positions, in the same prefill chunks, never refreshed). At every
// chosen token it compares the two next-token distributions: KL(full ‖ policy) and whether the argmax
// tokens agree — a task-free measure of what eviction changed, step by step.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "cache/kv_cache.h"
#include "model/model.h"

namespace kvbench {

struct StepFidelity {             // one rollout: one entry per chosen token
  std::vector<float> kl;          // KL(full ‖ policy) of the next-token distributions, nats
  std::vector<int64_t> top1_agree;  // 1 when the two argmax tokens are the same
};

// KL(softmax(full) ‖ softmax(policy)) of two logit rows [V], in float64: exactly 0 for equal rows.
double kl_of_logits(const at::Tensor& full, const at::Tensor& policy);

class ShadowCache {
 public:
  explicit ShadowCache(const Model& model);
  // Feeds ids at positions [B, T] (a prefill chunk or a decode step); the logits of the last token [B, V].
  at::Tensor feed(const at::Tensor& ids, const at::Tensor& positions);
  void expand_batch(int64_t rollouts) { cache_.expand_batch(rollouts); }

 private:
  const Model& model_;
  KvCache cache_;
};

// Appends to `fidelity` the comparison of full [V] and policy [V] logits (one chosen token).
void record_fidelity(StepFidelity& fidelity, const at::Tensor& full, const at::Tensor& policy);

}  // namespace kvbench
