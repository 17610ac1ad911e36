// global (KVzip's ranking, kvpress's KVzipPress with layerwise off): the candidates of every layer and KV head
// compete together for L·KV·(J − sinks − recent) slots, so layers and heads whose scores are low keep less (ties:
// the lower layer, then the lower head, then the older slot). With a ratio budget R the cache keeps kvpress's count
// in all, T − ⌊T·R⌋ of its T entries (protected ones included), rather than L·KV·⌊n·(1 − R)⌋. Every head still
// keeps its protected entries.
#include <algorithm>
#include <memory>

#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/allocators/layer_by_layer.h"

namespace kvbench {

namespace {
class GlobalAllocator final : public Allocator {
 public:
  std::string name() const override { return "global"; }
  std::string summary() const override {
    return "every layer's and head's candidates compete together for the whole budget, so layers and heads that "
           "score low keep less (KVzip)";
  }
  ScoreKind needs() const override { return ScoreKind::PerKvHead; }
  at::Tensor keep(const Model&, const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                  const KeepRule& rule) const override {
    // First every layer's candidates and scores, then the winners over all of them, handed back layer by layer.
    std::vector<at::Tensor> layer_scores, layer_candidates;
    int64_t held = 0;
    keep_layer_by_layer(scores, cache, budget, rule, name(),
                        [&](const at::Tensor& s, const at::Tensor& candidates, int64_t l) {
                          layer_scores.push_back(s.flatten(1));
                          layer_candidates.push_back(candidates.flatten(1));
                          held += cache.head_positions(l).ge(0).sum().item<int64_t>() / cache.batch();
                          return at::zeros_like(candidates);
                        });
    const int64_t rows = cache.num_layers() * cache.keys(0).size(1);
    const at::Tensor all_candidates = at::cat(layer_candidates, 1);
    const int64_t protected_entries = held - all_candidates.sum().item<int64_t>() / cache.batch();
    const int64_t total = budget.ratio > 0
                              ? held - static_cast<int64_t>(static_cast<double>(held) * budget.ratio)
                              : rows * (budget.frozen + budget.J);
    const at::Tensor winners =
        best_candidates(at::cat(layer_scores, 1), all_candidates, std::max<int64_t>(total - protected_entries, 0),
                        rule.keep_lowest);
    std::vector<at::Tensor> per_layer = winners.split_with_sizes(sizes_of(layer_candidates), 1);
    return keep_layer_by_layer(scores, cache, budget, rule, name(),
                               [&](const at::Tensor&, const at::Tensor& candidates, int64_t l) {
                                 return per_layer[l].view_as(candidates);
                               });
  }

 private:
  static std::vector<int64_t> sizes_of(const std::vector<at::Tensor>& layers) {
    std::vector<int64_t> sizes;
    for (const at::Tensor& t : layers) sizes.push_back(t.size(1));
    return sizes;
  }
};
}  // namespace

std::unique_ptr<Allocator> make_global_allocator(const SpecItems&) { return std::make_unique<GlobalAllocator>(); }

}  // namespace kvbench
