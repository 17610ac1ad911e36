// The policies, one line each in KVBENCH_POLICIES: `X("name", id)` is the policy that policies/<id>.cpp
// makes with make_<id>_policy(const PolicyOptions&). A list rather than self-registering objects: the
// core is a static library, and its linker drops object files nothing refers to.
#include <fmt/ranges.h>

#include <functional>
#include <map>
#include <set>

#include "common/error.h"
#include "policies/policy.h"

#define KVBENCH_POLICIES(X)                      \
  X("full", full)                                \
  X("sliding", sliding)                          \
  X("streaming", streaming)                      \
  X("random", random)                            \
  X("importance", importance)                    \
  X("tova", tova)                                \
  X("h2o", h2o)                                  \
  X("h2o-true", h2o_true)                        \
  X("kvpop", kvpop)                              \
  X("future-oracle", future_oracle)              \
  X("counter-causal", counter_causal)            \
  X("counter-causal-fast", counter_causal_fast)  \
  X("snapkv", snapkv)                            \
  X("knorm", knorm)                              \
  X("keydiff", keydiff)                          \
  X("observed-attention", observed_attention)    \
  X("expected-attention", expected_attention)    \
  X("lagkv", lagkv)                              \
  X("cur", cur)                                  \
  X("leverage", leverage)                        \
  X("non-causal-attention", non_causal_attention) \
  X("compactor", compactor)                      \
  X("qfilter", qfilter)                          \
  X("finch", finch)                              \
  X("kvzip", kvzip)                              \
  X("kvzap", kvzap)                              \
  /* (one line each, ending in a backslash, before this one) */

namespace kvbench {

#define KVBENCH_DECLARE_POLICY(name, id) std::unique_ptr<Policy> make_##id##_policy(const PolicyOptions&);
KVBENCH_POLICIES(KVBENCH_DECLARE_POLICY)
#undef KVBENCH_DECLARE_POLICY

namespace {
// The built-in policies, then those a program registers while it runs (the Python module's).
std::map<std::string, PolicyFactory>& factories() {
#define KVBENCH_POLICY_ENTRY(name, id) {name, make_##id##_policy},
  static std::map<std::string, PolicyFactory> table = {KVBENCH_POLICIES(KVBENCH_POLICY_ENTRY)};
#undef KVBENCH_POLICY_ENTRY
  return table;
}

bool builtin_policy(const std::string& name) {
#define KVBENCH_POLICY_NAME(policy_name, id) policy_name,
  static const std::set<std::string> names = {KVBENCH_POLICIES(KVBENCH_POLICY_NAME)};
#undef KVBENCH_POLICY_NAME
  return names.count(name) > 0;
}
}  // namespace

void register_policy(const std::string& name, PolicyFactory factory) {
  if (name.empty() || name.find_first_of(":,=") != std::string::npos)
    fail("cannot register a policy named \"{}\": a name has no ':', ',' or '='", name);
  if (builtin_policy(name)) fail("cannot register a policy named \"{}\": a built-in policy has that name", name);
  factories()[name] = std::move(factory);
}

std::unique_ptr<Policy> make_policy(const std::string& spec) {
  const Spec parsed = parse_spec(spec, "policy");
  auto it = factories().find(parsed.name);
  if (it == factories().end()) fail("unknown policy \"{}\" (known: {})", parsed.name, fmt::join(policy_names(), ", "));
  const PolicyOptions options{parsed.items};
  auto policy = it->second(options);
  options.knobs.check_all_read();
  policy->spec_ = options.knobs.normal_form(parsed.name);
  policy->knob_settings_ = options.knobs.settings();
  return policy;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

}  // namespace kvbench
