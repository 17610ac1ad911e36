// The optimisation pieces shared by every trainer in kvbench (demo model, KVpop scorer): AdamW with
// decoupled weight decay, a cosine learning-rate schedule with linear warm-up, and global-norm
// gradient clipping. Written on ATen directly (no torch::optim): a few lines, fully deterministic.
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace kvbench {

struct AdamWOptions {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;  // applied only to the parameters marked for decay
};

class AdamW {
 public:
  // `decay[i]`: whether params[i] is decayed (matrices yes; norms and biases no, as is customary).
  AdamW(std::vector<at::Tensor> params, std::vector<bool> decay, AdamWOptions options = {});
  // One update with learning rate `lr` from the gradients in .grad() (parameters without one are skipped).
  void step(double lr);
  void zero_grad();
  int64_t steps() const { return steps_; }

 private:
  std::vector<at::Tensor> params_, first_moment_, second_moment_;
  std::vector<bool> decay_;
  AdamWOptions options_;
  int64_t steps_ = 0;
};

struct CosineSchedule {
  double peak_lr = 1e-3;
  double min_lr = 1e-4;
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;

  // Linear warm-up to peak over warmup_steps (step 0 gets peak/warmup), then cosine down to min_lr at total_steps.
  double at(int64_t step) const;
};

// Scales all gradients so their joint L2 norm is at most max_norm; returns the norm before clipping.
double clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm);

}  // namespace kvbench
