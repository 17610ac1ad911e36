// `--shadow full`: a full-cache twin of one sample's generation, teacher-forced with the policy's own
// tokens (fed the same ids at the same positions, in the same prefill chunks, never refreshed). At every
// chosen token it compares the two next-token distributions: KL(full ‖ policy) and whether the argmax
// tokens agree — a task-free measure of what eviction changed, step by step.
//
// It also measures the attention the policy lost: for every token the twin is fed (every prompt chunk's
// tokens, every decode step of a rollout still generating), the twin's attention probability on the
// original positions the policy's cache no longer holds at that moment, per layer, averaged over query
// heads. Each query is credited to the latest refresh before it: a refresh's window runs from the
// token after it to the next refresh (or the end of generation), and over it the policy's cache is that
// refresh's kept set plus the tokens fed since. The entries missing are those evicted at that refresh
// *or any earlier one*: the window's mass is what all evictions so far cost at those steps. Summed over
// every window it equals the future attention mass (every later query, as future-oracle measures it)
// landing on each refresh's evicted entries, summed over refreshes.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "cache/kv_cache.h"
#include "engine/observer.h"
#include "model/model.h"

namespace kvbench {

struct StepFidelity {             // one rollout: one entry per chosen token
  std::vector<float> kl;          // KL(full ‖ policy) of the next-token distributions, nats
  std::vector<int64_t> top1_agree;  // 1 when the two argmax tokens are the same
};

// One refresh's window (see above): per rollout, queries × layers row-major, each value the twin's
// attention on entries absent from the policy's cache, mean over query heads.
struct LostAttention {
  int64_t layers = 0;
  std::vector<std::vector<float>> by_rollout;
};

// KL(softmax(full) ‖ softmax(policy)) of two logit rows [V], in float64: exactly 0 for equal rows.
double kl_of_logits(const at::Tensor& full, const at::Tensor& policy);

struct ShadowStep {
  at::Tensor logits;                  // the last fed token's [B, V]
  std::vector<at::Tensor> attention;  // with attention: per layer [B, H, T, N], the fed tokens' probabilities
};

class ShadowCache {
 public:
  explicit ShadowCache(const Model& model);
  // Feeds ids at positions [B, T] (a prefill chunk or a decode step); `attention`: also every layer's
  // probabilities (only while they are needed: a long prompt's [H, T, N] per layer is large).
  ShadowStep feed(const at::Tensor& ids, const at::Tensor& positions, bool attention);
  void expand_batch(int64_t rollouts) { cache_.expand_batch(rollouts); }

 private:
  const Model& model_;
  KvCache cache_;
};

// Appends to `fidelity` the comparison of full [V] and policy [V] logits (one chosen token).
void record_fidelity(StepFidelity& fidelity, const at::Tensor& full, const at::Tensor& policy);

// The twin's attention (ShadowStep::attention: slot = original position, as the twin never evicts) on the
// positions `policy_cache` does not hold, per sequence, fed token and layer, mean over query heads:
// [B, T, L] float64 on the CPU. A policy cache with one sequence stands for every row of the twin's.
at::Tensor attention_on_absent(const std::vector<at::Tensor>& full_attention, const KvCache& policy_cache);

// The shadow run itself: watches a generation (GenerationObserver), feeds the twin what the policy's cache
// is fed, and reports GenerationResult::fidelity and ::lost_attention.
class ShadowRun final : public GenerationObserver {
 public:
  ShadowRun(const Model& model, int64_t rollouts);
  void prompt_chunk(const at::Tensor& ids, const at::Tensor& positions, const KvCache& cache) override;
  void prompt_done(const at::Tensor& logits, int64_t rollouts) override;
  void decode_step(const at::Tensor& ids, const at::Tensor& positions, const at::Tensor& logits, const KvCache& cache,
                   const std::vector<bool>& choosing) override;
  void refreshed(const KvCache& cache) override;
  void report(GenerationResult& result) override;

 private:
  // Feeds the twin; the attention it pays to entries absent from `cache` goes to the latest refresh's window
  // for each rollout still choosing. Returns the twin's logits of the last fed token.
  at::Tensor feed(const at::Tensor& ids, const at::Tensor& positions, const KvCache& cache,
                  const std::vector<bool>& choosing);
  // Records each choosing rollout's fidelity: policy logits [R, V] against the twin's [R or 1, V].
  void compare(const at::Tensor& policy_logits, const at::Tensor& full_logits, const std::vector<bool>& choosing);

  ShadowCache twin_;
  int64_t rollouts_;
  at::Tensor prompt_logits_;  // the twin's logits after the last prompt chunk
  std::vector<StepFidelity> fidelity_;
  std::vector<LostAttention> lost_attention_;
};

}  // namespace kvbench
