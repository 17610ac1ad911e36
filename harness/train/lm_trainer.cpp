#include "train/lm_trainer.h"

#include <spdlog/spdlog.h>

#include <ATen/core/grad_mode.h>

#include <algorithm>

#include "common/error.h"
#include "model/weights.h"
#include "tasks/rng.h"

namespace kvbench {

TokenBatch make_batch(const std::vector<const TrainingExample*>& examples) {
  size_t longest = 0;
  for (const auto* e : examples) longest = std::max(longest, e->ids.size());
  const int64_t B = static_cast<int64_t>(examples.size()), T = static_cast<int64_t>(longest);
  TokenBatch batch{at::zeros({B, T}, at::kLong), at::zeros({B, T}, at::kFloat)};
  for (int64_t b = 0; b < B; ++b) {
    const TrainingExample& e = *examples[b];
    if (!e.weights.empty() && e.weights.size() != e.ids.size())
      fail("training example {}: {} loss weights for {} tokens", b, e.weights.size(), e.ids.size());
    const int64_t n = static_cast<int64_t>(e.ids.size());
    batch.ids[b].narrow(0, 0, n).copy_(at::tensor(e.ids, at::kLong));
    batch.weights[b].narrow(0, 0, n).copy_(e.weights.empty() ? at::ones({n}) : at::tensor(e.weights, at::kFloat));
  }
  return batch;
}

at::Tensor language_model_loss(const Model& model, const TokenBatch& batch) {
  const int64_t B = batch.ids.size(0), T = batch.ids.size(1);
  const at::Tensor positions = at::arange(T, at::kLong).unsqueeze(0).expand({B, T});
  const at::Tensor logits = model.forward_sequence(batch.ids, positions).narrow(1, 0, T - 1);
  const at::Tensor targets = batch.ids.narrow(1, 1, T - 1);
  const at::Tensor weights = batch.weights.narrow(1, 1, T - 1).to(logits.scalar_type());
  const at::Tensor token_loss = -at::log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1);
  return (token_loss * weights).sum() / weights.sum().clamp_min(1e-12);
}

ExampleOrder::ExampleOrder(size_t count, uint64_t seed) : order_(count), cursor_(count), rng_state_(seed) {
  if (count == 0) fail("training needs at least one example");
}

size_t ExampleOrder::next() {
  if (cursor_ == order_.size()) {  // a fresh permutation per epoch, from the running generator state
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    tasks::SplitMix64 rng(rng_state_);
    rng.shuffle(order_);
    rng_state_ = rng.next();
    cursor_ = 0;
  }
  return order_[cursor_++];
}

std::vector<double> train_language_model(const ModelConfig& config, ModelWeights& weights, const BatchSource& batches,
                                         const LmTrainingOptions& options, const StepHook& after_step) {
  std::vector<at::Tensor> params;
  std::vector<bool> decay;
  for (auto& [name, tensor] : named_weights(config, weights)) {
    tensor.requires_grad_(true);
    params.push_back(tensor);
    decay.push_back(tensor.dim() >= 2);
  }
  const Model model = Model::from_weights(config, weights);
  AdamW optimizer(params, decay, options.adamw);
  std::vector<double> losses;
  for (int64_t step = 0; step < options.steps; ++step) {
    const std::vector<TrainingExample> examples = batches(step);
    std::vector<const TrainingExample*> picked;
    for (const auto& e : examples) picked.push_back(&e);
    at::Tensor loss = language_model_loss(model, make_batch(picked));
    loss.backward();
    const double norm = clip_grad_norm(params, options.clip_norm);
    optimizer.step(options.schedule.at(step));
    optimizer.zero_grad();
    losses.push_back(loss.item<double>());
    if (options.log_every > 0 && (step % options.log_every == 0 || step + 1 == options.steps))
      spdlog::info("step {}/{}: loss {:.4f}, grad norm {:.3f}, lr {:.2e}", step + 1, options.steps, losses.back(),
                   norm, options.schedule.at(step));
    if (after_step) {
      at::NoGradGuard no_grad;
      after_step(step, model);
    }
  }
  for (auto& p : params) p.requires_grad_(false);
  return losses;
}

std::vector<double> train_language_model(const ModelConfig& config, ModelWeights& weights,
                                         const std::vector<TrainingExample>& examples,
                                         const LmTrainingOptions& options) {
  ExampleOrder order(examples.size(), options.seed);
  const BatchSource batches = [&](int64_t) {
    std::vector<TrainingExample> batch;
    for (int64_t b = 0; b < options.batch_size; ++b) batch.push_back(examples[order.next()]);
    return batch;
  };
  return train_language_model(config, weights, batches, options);
}

}  // namespace kvbench
