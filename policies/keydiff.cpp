// keydiff (Park et al. 2025, kvpress's KeyDiffPress): keep the keys least like the rest. Each layer and
// KV head averages its unit-length keys into an anchor and scores an entry −cos(k, anchor), so the most
// distinctive keys stay. Needs no attention, hence works with any attention kernel.
#include "policies/rule_policy.h"

namespace kvbench {

namespace {
at::Tensor keydiff_scores(const ScoringContext& context, int64_t layer, const at::Tensor& positions) {
  const at::Tensor keys = context.cache.keys(layer).to(at::kFloat);  // [B, KV, N, D]
  const at::Tensor unit = keys / keys.norm(2, {-1}, true).clamp_min(1e-12);  // F.normalize
  // The anchor averages the entries a head holds: a ragged cache's padding slots are left out.
  const at::Tensor held = positions.ge(0).unsqueeze(-1);
  const at::Tensor anchor = context.cache.ragged() ? (unit * held).sum(2, true) / held.sum(2, true).clamp_min(1)
                                                   : unit.mean(2, true);
  return -at::cosine_similarity(keys, anchor, -1);
}
}  // namespace

std::unique_ptr<Policy> make_keydiff_policy(const PolicyOptions&) {
  return per_head_rule("keydiff", "per KV head: the keys least like the head's mean unit key (kvpress KeyDiffPress)",
                       keydiff_scores);
}

}  // namespace kvbench
