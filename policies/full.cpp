// full: no eviction; the cache keeps every token (the upper reference of every table).
#include "policies/policy.h"

namespace kvbench {

namespace {
class FullPolicy final : public Policy {
 public:
  std::string name() const override { return "full"; }
  std::string summary() const override { return "everything (no refresh)"; }
  bool evicts() const override { return false; }
  at::Tensor score(const ScoringContext&) override { return {}; }
};
}  // namespace

std::unique_ptr<Policy> make_full_policy(const PolicyOptions&) { return std::make_unique<FullPolicy>(); }

}  // namespace kvbench
