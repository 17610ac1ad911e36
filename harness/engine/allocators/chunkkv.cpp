// chunkkv (ChunkKV, Liu et al. 2025, kvpress's ChunkKVPress): keeps whole chunks of `length` consecutive
// entries so that kept text stays readable. In each layer the candidates (after every head's protected entries)
// are cut into chunks in slot order, the last possibly shorter; a chunk scores the mean over its entries of
// the layer's scores summed over KV heads, and the best chunks stay, the same in every head of the layer. With a
// ratio budget the layer keeps max(1, ⌊C·(1 − R)⌋) of its C chunks, as kvpress counts; with a token budget
// ⌊(J − sinks − recent) / length⌋ (at least one). Layers that keep the shorter last chunk hold fewer entries,
// so the cache is ragged. Fewer candidates than one chunk: each head keeps its own best, as kvpress falls back
// to the wrapped press. kvpress protects nothing: its leaderboard row is `--recent 0` (snapkv's window then
// scores above the rest, as in kvpress).
// Knob length (1..65536, default 20), e.g. --policy snapkv --allocator chunkkv:length=10.
#include <algorithm>
#include <memory>

#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/allocators/layer_by_layer.h"

namespace kvbench {

namespace {
class ChunkKvAllocator final : public Allocator {
 public:
  explicit ChunkKvAllocator(int64_t length) : length_(length) {}
  std::string name() const override { return "chunkkv"; }
  std::string summary() const override {
    return "keeps whole chunks of `length` entries, the same in every head of a layer, ranked by their mean score "
           "summed over heads (ChunkKV)";
  }
  ScoreKind needs() const override { return ScoreKind::PerToken; }
  at::Tensor keep(const Model&, const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                  const KeepRule& rule) const override {
    const int64_t per_head = std::max<int64_t>(budget.J - rule.sinks - rule.recent, 0);
    return keep_layer_by_layer(scores, cache, budget, rule, name(),
                               [&](const at::Tensor& layer_scores, const at::Tensor& candidates, int64_t) {
                                 at::Tensor chosen = at::zeros_like(candidates);
                                 for (int64_t b = 0; b < candidates.size(0); ++b)
                                   chosen[b] = chunks(layer_scores[b], candidates[b], budget.ratio, per_head, rule);
                                 return chosen;
                               });
  }

 private:
  // One sequence's chosen candidates [KV, n] from its scores and candidates [KV, n].
  at::Tensor chunks(const at::Tensor& scores, const at::Tensor& candidates, double ratio, int64_t per_head,
                    const KeepRule& rule) const {
    const at::Tensor slots = candidates.all(0).nonzero().flatten();  // those of every head, in slot order
    const int64_t n = slots.size(0), count = (n + length_ - 1) / length_;
    if (n < length_) return best_candidates(scores, candidates, per_head, rule.keep_lowest);
    const int64_t kept = std::min(count, std::max<int64_t>(1, ratio > 0 ? static_cast<int64_t>(count * (1 - ratio))
                                                                         : per_head / length_));
    const at::Tensor chunk_of = at::arange(n, slots.options()).div(length_, "floor");
    const at::Tensor summed = scores.to(at::kDouble).index_select(1, slots).sum(0);  // [n]
    const at::Tensor sizes = at::zeros({count}, summed.options()).index_add_(0, chunk_of, at::ones_like(summed));
    const at::Tensor mean = at::zeros({count}, summed.options()).index_add_(0, chunk_of, summed) / sizes;
    const at::Tensor order = std::get<1>(mean.sort(/*stable=*/true, -1, /*descending=*/!rule.keep_lowest));
    const at::Tensor best = at::zeros({count}, candidates.options()).index_fill_(0, order.narrow(0, 0, kept), true);
    return at::zeros_like(candidates).index_fill_(1, slots.masked_select(best.index_select(0, chunk_of)), true);
  }

  int64_t length_;
};
}  // namespace

std::unique_ptr<Allocator> make_chunkkv_allocator(const SpecItems& knobs) {
  return std::make_unique<ChunkKvAllocator>(knobs.integer("length", 20, 1, 65536));
}

}  // namespace kvbench
