// tova (TOVA): the last real query's softmax attention at the last layer, averaged over heads.
#include "policies/policy.h"

namespace kvbench {

namespace {
class TovaPolicy final : public Policy {
 public:
  std::string name() const override { return "tova"; }
  PolicyNeeds needs() const override { return {false, AttentionCapture::LastLayer}; }
  void observe(const ForwardResult& step, const KvCache&) override {
    const at::Tensor& probs = step.attention.back();  // [B, H, T, N]
    last_query_ = probs.select(2, probs.size(2) - 1).mean(1);  // [B, N]
  }
  void expand_batch(int64_t batch) override { last_query_ = last_query_.expand({batch, last_query_.size(1)}); }
  at::Tensor score(const ScoringContext&) override { return last_query_; }

 private:
  at::Tensor last_query_;
};
}  // namespace

std::unique_ptr<Policy> make_tova_policy(const PolicyOptions&) { return std::make_unique<TovaPolicy>(); }

}  // namespace kvbench
