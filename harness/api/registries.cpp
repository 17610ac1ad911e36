#include "api/registries.h"

#include "common/error.h"
#include "engine/allocator.h"
#include "policies/policy.h"
#include "run/profile.h"

namespace kvbench::api {

namespace {

std::string scores_text(ScoreKind kind) {
  return kind == ScoreKind::ByPosition ? "none" : kind == ScoreKind::PerToken ? "per token" : "per KV head";
}

}  // namespace

std::vector<PolicyInfo> policies() {
  std::vector<PolicyInfo> out;
  for (const std::string& name : policy_names()) {
    const auto policy = make_policy(name);
    out.push_back({name, policy->summary(), policy->knob_settings(), scores_text(policy->score_kind())});
  }
  return out;
}

std::vector<AllocatorInfo> allocators() {
  std::vector<AllocatorInfo> out;
  for (const std::string& name : allocator_names()) {
    const Allocator& allocator = find_allocator(name);
    const bool every = allocator.needs() == ScoreKind::ByPosition;
    out.push_back({name, allocator.summary(), allocator.knob_settings(), allocator.ragged(), every,
                   every ? policy_names() : policies_served(allocator)});
  }
  return out;
}

std::string allocator_spec_error(const std::string& spec) {
  try {
    find_allocator(spec);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

std::vector<std::string> profile_names() { return kvbench::profile_names(); }

std::vector<ProfileRow> profile_rows() {
  std::vector<ProfileRow> out;
  for (const ProfileBehaviour& row : profile_behaviours())
    out.push_back({row.behaviour, row.reference, row.kvbench, preset_text(row), static_cast<bool>(row.differs_for)});
  return out;
}

}  // namespace kvbench::api
