// What one sample's generation (engine/generate.h) shows an observer standing outside Algorithm 1, such as
// the shadow run (engine/shadow.h): every forward pass with the policy's cache as that pass left it (before
// any refresh of the step), every refresh, and the first token's logits once the prompt forks into rollouts.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "cache/kv_cache.h"

namespace kvbench {

struct GenerationResult;

class GenerationObserver {
 public:
  virtual ~GenerationObserver() = default;
  // A prefill chunk's pass fed `ids` at `positions` ([1, T]).
  virtual void prompt_chunk(const at::Tensor& ids, const at::Tensor& positions, const KvCache& cache) {}
  // The prompt is in: each of the `rollouts` chooses its first token from `logits` [R, V].
  virtual void prompt_done(const at::Tensor& logits, int64_t rollouts) {}
  // A decode step's pass fed `ids` at `positions` ([R, 1]) and gave next-token `logits` [R, V];
  // `choosing[b]`: rollout b still generates (a finished one keeps feeding its last token).
  virtual void decode_step(const at::Tensor& ids, const at::Tensor& positions, const at::Tensor& logits,
                           const KvCache& cache, const std::vector<bool>& choosing) {}
  // A refresh has just compacted `cache`.
  virtual void refreshed(const KvCache& cache) {}
  // Generation is over: the observer writes what it measured into the result.
  virtual void report(GenerationResult& result) {}
};

}  // namespace kvbench
