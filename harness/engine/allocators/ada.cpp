// ada (Ada-KV, Feng et al. 2024): in each layer the candidates of all KV heads compete together for the
// layer's KV·(J − sinks − recent) candidate slots, so the layer holds KV·(frozen + J) entries in all, and
// heads whose scores concentrate keep less (ties: the lower head, then the older slot). It needs per-head
// scores; every head still keeps its protected entries.
//
// Knob safeguard = α in [0, 1] (kvpress's alpha_safeguard; default 0): before the competition each head
// keeps its own best ⌊α·(J − sinks − recent)⌋ candidates (at least one when α > 0), as AdaKVPress does.
#include <algorithm>
#include <limits>
#include <memory>

#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/allocators/layer_by_layer.h"

namespace kvbench {

namespace {
class AdaAllocator final : public Allocator {
 public:
  explicit AdaAllocator(double safeguard) : safeguard_(safeguard) {}
  std::string name() const override { return "ada"; }
  std::string summary() const override {
    return "shares each layer's budget among its KV heads by their own scores, so focused heads keep less; each "
           "head's best `safeguard` share first (Ada-KV)";
  }
  ScoreKind needs() const override { return ScoreKind::PerKvHead; }
  at::Tensor keep(const Model&, const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                  const KeepRule& rule) const override {
    const int64_t per_head = std::max<int64_t>(budget.J - rule.sinks - rule.recent, 0);
    return keep_layer_by_layer(scores, cache, budget, rule, name(),
                               [&](const at::Tensor& layer_scores, const at::Tensor& candidates, int64_t) {
                                 const int64_t pool = candidates.size(1) * per_head;
                                 return best_candidates(with_safeguard(layer_scores, candidates, per_head, rule).flatten(1),
                                                        candidates.flatten(1), pool, rule.keep_lowest)
                                     .view_as(candidates);
                               });
  }

 private:
  // Scores [B, KV, n] with each head's safeguarded candidates moved to the top of the ranking.
  at::Tensor with_safeguard(const at::Tensor& scores, const at::Tensor& candidates, int64_t per_head,
                            const KeepRule& rule) const {
    if (safeguard_ <= 0 || per_head == 0) return scores;
    const int64_t safe = std::max<int64_t>(1, static_cast<int64_t>(safeguard_ * static_cast<double>(per_head)));
    const at::Tensor safeguarded = best_candidates(scores, candidates, safe, rule.keep_lowest);
    const double top = rule.keep_lowest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return at::where(safeguarded, at::full_like(scores, top, scores.options().dtype(at::kDouble)), scores.to(at::kDouble));
  }

  double safeguard_;
};
}  // namespace

std::unique_ptr<Allocator> make_ada_allocator(const SpecItems& knobs) {
  return std::make_unique<AdaAllocator>(knobs.number("safeguard", 0.0, 0.0, 1.0));
}

}  // namespace kvbench
