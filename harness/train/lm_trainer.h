// Next-token training of a decoder through Model::forward_sequence (the same forward the engine runs,
// with autograd on): weighted cross-entropy, AdamW, cosine schedule, clipping, seeded data order.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "model/model.h"
#include "train/optimizer.h"

namespace kvbench {

// One training sequence. weights[t] scales the loss of predicting ids[t] from ids[0..t-1]
// (weights[0] is unused: nothing predicts the first token); empty = 1 everywhere.
struct TrainingExample {
  std::vector<int64_t> ids;
  std::vector<float> weights;
};

struct LmTrainingOptions {
  uint64_t seed = 0;         // data order (the weights' initialisation is the caller's)
  int64_t steps = 100;
  int64_t batch_size = 8;
  CosineSchedule schedule;
  AdamWOptions adamw;
  double clip_norm = 1.0;
  int64_t log_every = 0;     // 0 = silent
};

// A batch of examples padded to the longest (padding carries weight 0): ids and loss weights [B, T].
struct TokenBatch {
  at::Tensor ids, weights;
};
TokenBatch make_batch(const std::vector<const TrainingExample*>& examples);

// Weighted mean next-token cross-entropy of `model` on `batch`.
at::Tensor language_model_loss(const Model& model, const TokenBatch& batch);

// Deterministic example order: consecutive seeded Fisher–Yates permutations of 0..count-1.
class ExampleOrder {
 public:
  ExampleOrder(size_t count, uint64_t seed);
  size_t next();

 private:
  std::vector<size_t> order_;
  size_t cursor_ = 0;
  uint64_t rng_state_;
};

// The examples of training step `step` (0-based): fresh data every step, or a fixed set in a seeded order.
using BatchSource = std::function<std::vector<TrainingExample>(int64_t step)>;
// Runs after the update of step `step` (0-based), gradients off, with the model as trained so far.
using StepHook = std::function<void(int64_t step, const Model& model)>;

// Marks every weight as a trainable leaf and trains it in place; returns the loss of every step.
std::vector<double> train_language_model(const ModelConfig& config, ModelWeights& weights, const BatchSource& batches,
                                         const LmTrainingOptions& options, const StepHook& after_step = {});

// The same on a fixed set of examples: batches of options.batch_size in ExampleOrder(options.seed).
std::vector<double> train_language_model(const ModelConfig& config, ModelWeights& weights,
                                         const std::vector<TrainingExample>& examples,
                                         const LmTrainingOptions& options);

}  // namespace kvbench
