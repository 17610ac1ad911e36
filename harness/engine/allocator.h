// Budget allocators beyond uniform: how a refresh spreads the budget J over layers and KV heads, for any
// scorer that can score a ragged cache (Policy::scores_ragged_caches): every scorer but sliding and
// streaming, which keep by position. Per layer and KV head: h2o-true, future-oracle, kvpop, tova (each
// layer's newest query), random. Token scores: h2o (by original position), importance (each layer's
// own keys), counter-causal[-fast] (one pass over the tokens any layer holds, each layer's queries
// reading only that layer's later entries; policies/anticausal.h). Uniform allocation
// (the same J in every layer and head) is select_keep in engine/budget.h; these two give layers and heads
// different sizes, so the cache becomes ragged (cache/kv_cache.h) and really holds less.
//
// Every (layer, KV head) row always keeps its protected entries, exactly as uniform does: the frozen
// prefix, then `sinks`, then the newest `recent` entries (counted over the entries the row holds, padding
// excluded). The rest of the budget goes to candidates by score (highest, or lowest with keep_lowest;
// ties to the older slot):
//
//   pyramid (PyramidKV, Cai et al. 2024): layer l has budget B_l (in J's units: frozen extra, sinks and
//     recent included) falling linearly from B_0 to B_{L−1} = B_0 / ratio with Σ B_l = L·J:
//       B_l = 2J/(1+r) · (r − (r−1)·l/(L−1)),  r = ratio ≥ 1  (L = 1: B_0 = J),
//     rounded down, then the L·J − Σ⌊B_l⌋ missing units go one each to the layers with the largest
//     fractional parts (ties: the lower layer), so budgets sum exactly to L·J. Every B_l must be at least
//     sinks + recent (else the ratio is refused). Each head of layer l keeps its top (B_l − sinks − recent)
//     candidates by its own scores; a token scorer's scores are shared by a layer's heads (h2o and
//     counter-causal: by every layer holding the token), so each layer keeps its own top B_l among the
//     entries it holds.
//   ada (Ada-KV, Feng et al. 2024): in each layer the candidates of all KV heads compete together for the
//     layer's KV·(J − sinks − recent) candidate slots, so the layer holds KV·(frozen + J) entries in all,
//     and heads whose scores concentrate keep less (ties: the lower head, then the older slot). It needs
//     per-head scores (token scorers — h2o, importance, counter-causal — are refused). Per-head minimum: the protected entries above.
#pragma once
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "engine/score_transforms.h"
#include "policies/policy.h"

namespace kvbench {

CacheBudget::Allocator parse_allocator(const std::string& name);  // uniform | pyramid | ada, else kvbench::Error
std::string allocator_name(CacheBudget::Allocator allocator);

// Pyramid budgets B_0 … B_{L−1} (see above); kvbench::Error when one falls below `minimum`.
std::vector<int64_t> pyramid_budgets(int64_t J, int64_t layers, double ratio, int64_t minimum);

// The keep set of a pyramid or ada refresh from scores [B, L, KV, ≥ N] over `cache` (padding slots
// ignored), or [B, N] token-level scores of a token-level cache (shared by every layer and head):
// [B, L, KV, M] slots, each row ascending then -1 padding (KvCache::compact_ragged).
at::Tensor allocate_ragged(const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                           const KeepRule& rule);

// Throws kvbench::Error when `budget.allocator` cannot serve `policy` (a scorer that cannot score a
// ragged cache; a token-level scorer with ada), the pyramid ratio leaves a layer below its protected entries,
// or phrase rules (--smooth, --keep-span: one token-level ranking) meet an allocator other than uniform.
void validate_allocator(const CacheBudget& budget, const PhraseRules& phrase, const Policy& policy,
                        const ModelConfig& config);

}  // namespace kvbench
