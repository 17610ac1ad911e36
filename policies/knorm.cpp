// knorm (Devoto et al. 2024, kvpress's KnormPress): a key of small L2 norm draws much attention, so each
// layer and KV head keeps its entries of smallest key norm (score −‖k‖, in float32 as kvpress).
#include "policies/rule_policy.h"

namespace kvbench {

namespace {
at::Tensor knorm_scores(const ScoringContext& context, int64_t layer, const at::Tensor&) {
  return -at::linalg_vector_norm(context.cache.keys(layer), 2, {-1}, false, at::kFloat);
}
}  // namespace

std::unique_ptr<Policy> make_knorm_policy(const PolicyOptions&) {
  return per_head_rule("knorm", "per KV head: the keys of smallest L2 norm (kvpress KnormPress)", knorm_scores);
}

}  // namespace kvbench
