#include "policies/rule_policy.h"

#include "policies/layer_scores.h"

namespace kvbench {

namespace {

class PerHeadRule final : public Policy {
 public:
  PerHeadRule(std::string name, std::string summary, LayerRule rule)
      : name_(std::move(name)), summary_(std::move(summary)), rule_(std::move(rule)) {}
  std::string name() const override { return name_; }
  std::string summary() const override { return summary_; }
  KeepRule keep_rule(const CacheBudget& budget) const override { return {false, budget.recent, Granularity::PerKvHead}; }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  at::Tensor score(const ScoringContext& context) override {
    return score_each_layer(context.cache,
                            [&](int64_t layer, const at::Tensor& positions) { return rule_(context, layer, positions); });
  }

 private:
  std::string name_, summary_;
  LayerRule rule_;
};

class PositionRule final : public Policy {
 public:
  PositionRule(std::string name, std::string summary, BudgetShare recent, BudgetShare sinks)
      : name_(std::move(name)), summary_(std::move(summary)), recent_(std::move(recent)), sinks_(std::move(sinks)) {}
  std::string name() const override { return name_; }
  std::string summary() const override { return summary_; }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, recent_(budget), Granularity::Token, sinks_ ? sinks_(budget) : 0};
  }
  at::Tensor score(const ScoringContext&) override { return {}; }

 private:
  std::string name_, summary_;
  BudgetShare recent_, sinks_;
};

}  // namespace

std::unique_ptr<Policy> per_head_rule(std::string name, std::string summary, LayerRule rule) {
  return std::make_unique<PerHeadRule>(std::move(name), std::move(summary), std::move(rule));
}

std::unique_ptr<Policy> position_rule(std::string name, std::string summary, BudgetShare recent, BudgetShare sinks) {
  return std::make_unique<PositionRule>(std::move(name), std::move(summary), std::move(recent), std::move(sinks));
}

}  // namespace kvbench
