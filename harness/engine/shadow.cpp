#include "engine/shadow.h"

#include <algorithm>

#include "engine/generate.h"

namespace kvbench {

double kl_of_logits(const at::Tensor& full, const at::Tensor& policy) {
  const at::Tensor log_p = at::log_softmax(full.to(at::kCPU, at::kDouble), -1);
  const at::Tensor log_q = at::log_softmax(policy.to(at::kCPU, at::kDouble), -1);
  return (log_p.exp() * (log_p - log_q)).sum().item<double>();
}

ShadowCache::ShadowCache(const Model& model) : model_(model), cache_(cache_shape(model.config()), 1, model.options(), false) {}

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

ShadowRun::ShadowRun(const Model& model, int64_t rollouts)
    : twin_(model), rollouts_(rollouts), fidelity_(rollouts) {}

void ShadowRun::prompt_chunk(const at::Tensor& ids, const at::Tensor& positions, const KvCache& cache) {
  prompt_logits_ = feed(ids, positions, cache, std::vector<bool>(rollouts_, true));
}

void ShadowRun::prompt_done(const at::Tensor& logits, int64_t rollouts) {
  if (rollouts > 1) twin_.expand_batch(rollouts);
  compare(logits, prompt_logits_, std::vector<bool>(rollouts, true));
}

void ShadowRun::decode_step(const at::Tensor& ids, const at::Tensor& positions, const at::Tensor& logits,
                            const KvCache& cache, const std::vector<bool>& choosing) {
  compare(logits, feed(ids, positions, cache, choosing), choosing);
}

void ShadowRun::refreshed(const KvCache& cache) {  // this refresh's window of lost attention opens
  lost_attention_.push_back({cache.num_layers(), std::vector<std::vector<float>>(rollouts_)});
}

void ShadowRun::report(GenerationResult& result) {
  result.fidelity = std::move(fidelity_);
  result.lost_attention = std::move(lost_attention_);
}

at::Tensor ShadowRun::feed(const at::Tensor& ids, const at::Tensor& positions, const KvCache& cache,
                           const std::vector<bool>& choosing) {
  const bool window_open = !lost_attention_.empty();  // before the first refresh nothing is missing
  const ShadowStep full = twin_.feed(ids, positions, window_open);
  if (!window_open) return full.logits;
  const at::Tensor lost = attention_on_absent(full.attention, cache).to(at::kCPU, at::kFloat);  // [B, T, L], read here
  auto& window = lost_attention_.back().by_rollout;
  for (int64_t b = 0; b < rollouts_; ++b)
    if (choosing[b]) {  // a finished rollout's fed token is no query of its sequence
      const at::Tensor mine = lost[std::min(b, lost.size(0) - 1)].contiguous();  // prefill: one row for all
      window[b].insert(window[b].end(), mine.data_ptr<float>(), mine.data_ptr<float>() + mine.numel());
    }
  return full.logits;
}

void ShadowRun::compare(const at::Tensor& policy_logits, const at::Tensor& full_logits,
                        const std::vector<bool>& choosing) {
  for (int64_t b = 0; b < rollouts_; ++b)
    if (choosing[b])  // finished rollouts keep feeding their last token, but choose nothing
      record_fidelity(fidelity_[b], full_logits[std::min(b, full_logits.size(0) - 1)], policy_logits[b]);
}

}  // namespace kvbench
