// Budget allocators: how a refresh spreads the budget J over layers and KV heads. Scoring and budgeting
// are separate concerns: a policy scores (policies/policy.h), an allocator turns the scores into a keep
// set, so any scorer combines with any allocator that its scores can serve. One class per allocator in
// engine/allocators/, listed one line each in engine/allocators/registry.cpp; the CLI's choices, its help
// and `kvbench list allocators` (the README's table, the results schema check) are read from there.
//
// Every (layer, KV head) row always keeps its protected entries: the frozen prefix, then `sinks`, then the
// newest `recent` entries (of a ragged cache: counted over the entries the row holds, padding excluded).
// The rest of the budget goes to candidates by score (highest, or lowest with keep_lowest; ties to the
// older slot).
#pragma once
#include <ATen/ATen.h>

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
  // Reads --pyramid-ratio (the first layer's budget / the last's), which is then part of the job's identity.
  virtual bool uses_pyramid_ratio() const { return false; }
  // Throws kvbench::Error when `budget` leaves a layer of a `layers`-layer model below `rule`'s protected entries.
  virtual void check_budget(const CacheBudget& budget, const KeepRule& rule, int64_t layers) const {}
  // The slots a refresh keeps, from the policy's scores over `cache` (undefined when it keeps by position):
  // [B, M] or [B, KV, M] (rule.granularity) of a uniform cache; of a ragged one [B, L, KV, M], each row
  // ascending then -1 padding (KvCache::compact_ragged).
  virtual at::Tensor keep(const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                          const KeepRule& rule) const = 0;
};

// The allocator registered under `name`; kvbench::Error naming the known ones otherwise.
const Allocator& find_allocator(const std::string& name);
std::vector<std::string> allocator_names();

// The evicting policies whose scores serve `allocator`, in registry order.
std::vector<std::string> policies_served(const Allocator& allocator);

// Throws kvbench::Error when `budget.allocator` cannot serve `policy` (its scores are of a lesser kind than
// the allocator needs), the budget leaves a layer below its protected entries, or phrase rules (--smooth,
// --keep-span: one token-level ranking) meet a ragged allocator.
void validate_allocator(const CacheBudget& budget, const PhraseRules& phrase, const Policy& policy,
                        const ModelConfig& config);

}  // namespace kvbench
