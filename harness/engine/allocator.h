// Budget allocators: how a refresh spreads the budget J over layers and KV heads. Scoring and budgeting
// are separate concerns: a policy scores (policies/policy.h), an allocator turns the scores into a keep
// set, so any scorer combines with any allocator that its scores can serve. One class per allocator in
// engine/allocators/, listed one line each in engine/allocators/registry.cpp; the CLI's choices, its help
// and `kvbench list allocators` (the README's table, the results schema check) are read from there.
//
// An allocator is named by a spec with the policies' syntax, its knobs read by its factory:
// "pyramid:ratio=3", "ada:safeguard=0.2" (common/spec.h); the spec's normal form is its identity.
//
// Every (layer, KV head) row always keeps its protected entries: the frozen prefix, then `sinks`, then the
// newest `recent` entries (of a ragged cache: counted over the entries the row holds, padding excluded).
// The rest of the budget goes to candidates by score (highest, or lowest with keep_lowest; ties to the
// older slot).
#pragma once
#include <ATen/ATen.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "engine/score_transforms.h"
#include "policies/policy.h"

namespace kvbench {

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::string name() const = 0;
  // One sentence for --help and `kvbench list allocators`: what the allocator does with J.
  virtual std::string summary() const = 0;
  // The least a policy's scores must serve (policies/policy.h ScoreKind); a policy giving less is refused.
  virtual ScoreKind needs() const = 0;
  // Layers and heads get sizes of their own: the cache becomes ragged (cache/kv_cache.h) and really holds
  // less where the budget is smaller; scores are then [B, L, KV, N] (CacheBudget::ragged).
  virtual bool ragged() const { return true; }
  // Every (layer, KV head) row keeps as many entries (what key rerotation needs), as any allocator that is not
  // ragged does.
  virtual bool equal_rows() const { return !ragged(); }
  // Keeps by a rule of its own (dms's score threshold, layers' ratios) rather than J: a job gives no J, and every
  // refresh point refreshes (CacheBudget::own_budget).
  virtual bool own_budget() const { return false; }
  // Throws kvbench::Error when `budget` leaves a layer of a `layers`-layer model below `rule`'s protected entries.
  virtual void check_budget(const CacheBudget& budget, const KeepRule& rule, int64_t layers) const {}
  // The slots a refresh keeps, from the policy's scores over `cache` (undefined when it keeps by position) of
  // `model` (whose weights an allocator may weigh entries by: critical): [B, M] or [B, KV, M] (rule.granularity) of
  // a uniform cache; of a ragged one [B, L, KV, M], each row ascending then -1 padding (KvCache::compact_ragged).
  virtual at::Tensor keep(const Model& model, const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                          const KeepRule& rule) const = 0;

  // The spec this instance was made from, in normal form (knobs at their defaults left out), and every knob's
  // value, defaults filled in. Set by find_allocator.
  const std::string& spec() const { return spec_; }
  const nlohmann::json& knob_settings() const { return knob_settings_; }

 private:
  friend const Allocator& find_allocator(const std::string& spec);
  std::string spec_;
  nlohmann::json knob_settings_ = nlohmann::json::object();
};

// The allocator `spec` names ("ada", "pyramid:ratio=3"), made once per spec; kvbench::Error naming the known
// allocators, or the knob, its type and range.
const Allocator& find_allocator(const std::string& spec);
std::vector<std::string> allocator_names();

// The evicting policies whose scores serve `allocator`, in registry order.
std::vector<std::string> policies_served(const Allocator& allocator);

// Throws kvbench::Error when `budget.allocator` cannot serve `policy` (its scores are of a lesser kind than
// the allocator needs), the budget leaves a layer below its protected entries, or phrase rules (--smooth,
// --keep-span: one token-level ranking) meet a ragged allocator.
void validate_allocator(const CacheBudget& budget, const PhraseRules& phrase, const Policy& policy,
                        const ModelConfig& config);

}  // namespace kvbench
