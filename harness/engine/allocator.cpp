#include "engine/allocator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>

#include "common/error.h"

namespace kvbench {

namespace {
// The registered allocators' names that satisfy `wanted`, as "a, b or c".
std::string allocators_where(const std::function<bool(const Allocator&)>& wanted) {
  std::vector<std::string> names;
  for (const std::string& name : allocator_names())
    if (wanted(find_allocator(name))) names.push_back(name);
  std::string listed;
  for (size_t i = 0; i < names.size(); ++i)
    listed += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return listed;
}
}  // namespace

std::vector<std::string> policies_served(const Allocator& allocator) {
  std::vector<std::string> served;
  for (const std::string& name : policy_names()) {
    const auto policy = make_policy(name);
    if (policy->evicts() && policy->score_kind() >= allocator.needs()) served.push_back(name);
  }
  return served;
}

void validate_allocator(const CacheBudget& budget, const PhraseRules& phrase, const Policy& policy,
                        const ModelConfig& config) {
  const Allocator& allocator = find_allocator(budget.allocator);
  if (phrase.active() && allocator.ragged())
    fail("--smooth and --keep-span rank one token-level list of candidates: they need --allocator {}",
         allocators_where([](const Allocator& a) { return !a.ragged(); }));
  if (!policy.evicts()) return;
  if (policy.score_kind() == ScoreKind::ByPosition && allocator.needs() > ScoreKind::ByPosition)
    fail("allocator {} needs a policy that scores every layer and KV head of a ragged cache ({}); {} does not "
         "(use allocator {})",
         allocator.name(), fmt::join(policies_served(allocator), ", "), policy.name(),
         allocators_where([](const Allocator& a) { return a.needs() == ScoreKind::ByPosition; }));
  if (policy.score_kind() < allocator.needs())
    fail("allocator {} {}; {} scores tokens (use allocator {})", allocator.name(), allocator.summary(), policy.name(),
         allocators_where([&](const Allocator& a) { return a.needs() <= policy.score_kind(); }));
  if (rerotates(policy.keep_rule(budget), budget) && !allocator.equal_rows())
    fail("key rerotation ({}) needs an allocator that keeps as many entries in every layer and head ({})",
         budget.rerotate ? "--rerotate-keys" : "policy " + policy.name(),
         allocators_where([](const Allocator& a) { return a.equal_rows(); }));
  allocator.check_budget(budget, policy.keep_rule(budget), config.num_layers);
}

}  // namespace kvbench
