// ada (Ada-KV, Feng et al. 2024): in each layer the candidates of all KV heads compete together for the
// layer's KV·(J − sinks − recent) candidate slots, so the layer holds KV·(frozen + J) entries in all, and
// heads whose scores concentrate keep less (ties: the lower head, then the older slot). It needs per-head
// scores; every head still keeps its protected entries.
#include <algorithm>
#include <memory>

#include "engine/allocator.h"
#include "engine/allocators/layer_by_layer.h"

namespace kvbench {

namespace {
class AdaAllocator final : public Allocator {
 public:
  std::string name() const override { return "ada"; }
  std::string summary() const override {
    return "shares each layer's budget among its KV heads by their own scores, so focused heads keep less (Ada-KV)";
  }
  ScoreKind needs() const override { return ScoreKind::PerKvHead; }
  at::Tensor keep(const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                  const KeepRule& rule) const override {
    const int64_t per_head = std::max<int64_t>(budget.J - rule.sinks - rule.recent, 0);
    return keep_layer_by_layer(scores, cache, budget, rule, name(),
                               [&](const at::Tensor& layer_scores, const at::Tensor& candidates, int64_t) {
                                 const int64_t pool = candidates.size(1) * per_head;
                                 return best_candidates(layer_scores.flatten(1), candidates.flatten(1), pool,
                                                        rule.keep_lowest)
                                     .view_as(candidates);
                               });
  }
};
}  // namespace

std::unique_ptr<Allocator> make_ada_allocator() { return std::make_unique<AdaAllocator>(); }

}  // namespace kvbench
