// What can be named in a job, as `kvbench list` and `--help` show it: the registered policies and allocators
// with their knobs, and the profiles with the behaviours they differ in.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvbench::api {

struct PolicyInfo {
  std::string name, summary;
  nlohmann::json knobs;  // each knob at its default
  std::string scores;    // what it scores: "none", "per token" or "per KV head"
};
std::vector<PolicyInfo> policies();

struct AllocatorInfo {
  std::string name, summary;
  nlohmann::json knobs;
  bool ragged = false;
  bool serves_every_policy = false;  // it needs no scores (uniform)
  std::vector<std::string> policies;  // the policies it serves (all when serves_every_policy)
};
std::vector<AllocatorInfo> allocators();
// "" when `spec` names a registered allocator with valid knobs, else why not (the knob, its type and range).
std::string allocator_spec_error(const std::string& spec);

struct ProfileRow {
  std::string behaviour;  // what may differ
  std::string reference;  // what the paper's code does
  std::string kvbench;    // kvbench's default, and why
  std::string preset;     // how `reference` sets it: policy knobs ("h2o:carry=true") or the setting it switches
  bool differs = false;   // kvbench's default departs from the paper's code
};
std::vector<std::string> profile_names();
std::vector<ProfileRow> profile_rows();

}  // namespace kvbench::api
