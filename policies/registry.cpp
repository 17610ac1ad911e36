#include <functional>
#include <map>

#include "common/error.h"
#include "policies/policy.h"

namespace kvbench {

// Each policy file defines one of these.
std::unique_ptr<Policy> make_full_policy(const PolicyOptions&);
std::unique_ptr<Policy> make_sliding_policy(const PolicyOptions&);
std::unique_ptr<Policy> make_streaming_policy(const PolicyOptions&);
std::unique_ptr<Policy> make_random_policy(const PolicyOptions&);
std::unique_ptr<Policy> make_importance_policy(const PolicyOptions&);
std::unique_ptr<Policy> make_tova_policy(const PolicyOptions&);
std::unique_ptr<Policy> make_h2o_policy(const PolicyOptions&);
std::unique_ptr<Policy> make_h2o_true_policy(const PolicyOptions&);
std::unique_ptr<Policy> make_kvpop_policy(const PolicyOptions&);
std::unique_ptr<Policy> make_future_oracle_policy(const PolicyOptions&);
std::unique_ptr<Policy> make_counter_causal_policy(const PolicyOptions&);
std::unique_ptr<Policy> make_counter_causal_fast_policy(const PolicyOptions&);

namespace {
using Factory = std::function<std::unique_ptr<Policy>(const PolicyOptions&)>;

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"full", make_full_policy},
      {"sliding", make_sliding_policy},
      {"streaming", make_streaming_policy},
      {"random", make_random_policy},
      {"importance", make_importance_policy},
      {"tova", make_tova_policy},
      {"h2o", make_h2o_policy},
      {"h2o-true", make_h2o_true_policy},
      {"kvpop", make_kvpop_policy},
      {"future-oracle", make_future_oracle_policy},
      {"counter-causal", make_counter_causal_policy},
      {"counter-causal-fast", make_counter_causal_fast_policy},
  };
  return table;
}
}  // namespace

std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyOptions& options) {
  auto it = factories().find(name);
  if (it == factories().end()) {
    std::string known;
    for (const auto& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
    fail("unknown policy \"{}\" (known: {})", name, known);
  }
  return it->second(options);
}

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

}  // namespace kvbench
