#include "train/optimizer.h"

#include <ATen/core/grad_mode.h>

#include <cmath>

#include "common/error.h"

namespace kvbench {

AdamW::AdamW(std::vector<at::Tensor> params, std::vector<bool> decay, AdamWOptions options)
    : params_(std::move(params)), decay_(std::move(decay)), options_(options) {
  if (decay_.size() != params_.size()) fail("AdamW: {} decay flags for {} parameters", decay_.size(), params_.size());
  for (const auto& p : params_) {
    first_moment_.push_back(at::zeros_like(p));
    second_moment_.push_back(at::zeros_like(p));
  }
}

void AdamW::step(double lr) {
  at::NoGradGuard no_grad;
  ++steps_;
  const double correction1 = 1.0 - std::pow(options_.beta1, static_cast<double>(steps_));
  const double correction2 = 1.0 - std::pow(options_.beta2, static_cast<double>(steps_));
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& p = params_[i];
    if (!p.grad().defined()) continue;
    const at::Tensor& g = p.grad();
    first_moment_[i].mul_(options_.beta1).add_(g, 1.0 - options_.beta1);
    second_moment_[i].mul_(options_.beta2).addcmul_(g, g, 1.0 - options_.beta2);
    if (decay_[i]) p.mul_(1.0 - lr * options_.weight_decay);  // decoupled: not part of the gradient
    const at::Tensor denominator = (second_moment_[i] / correction2).sqrt_().add_(options_.eps);
    p.addcdiv_(first_moment_[i], denominator, -lr / correction1);
  }
}

void AdamW::zero_grad() {
  for (auto& p : params_)
    if (p.grad().defined()) p.mutable_grad() = at::Tensor();
}

double CosineSchedule::at(int64_t step) const {
  if (step < warmup_steps) return peak_lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  const double span = static_cast<double>(std::max<int64_t>(total_steps - warmup_steps, 1));
  const double progress = std::min(1.0, static_cast<double>(step - warmup_steps) / span);
  return min_lr + 0.5 * (peak_lr - min_lr) * (1.0 + std::cos(M_PI * progress));
}

double clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm) {
  at::NoGradGuard no_grad;
  double squares = 0.0;
  for (const auto& p : params)
    if (p.grad().defined()) squares += p.grad().to(at::kDouble).pow(2).sum().item<double>();
  const double norm = std::sqrt(squares);
  if (norm > max_norm && norm > 0.0)
    for (const auto& p : params)
      if (p.grad().defined()) p.grad().mul_(max_norm / norm);
  return norm;
}

}  // namespace kvbench
