// chunk (kvpress's ChunkPress): the cache is cut into chunks of `length` slots, and each (layer, KV head) keeps
// max(1, ⌊c·(1 − R)⌋) of each chunk's c entries, so every part of the context keeps its share instead of the best
// part keeping most. Protected entries count inside their chunk's share; the chunk's best candidates fill the rest.
// R is a ratio budget's compression ratio, else 1 − J/n for a layer of n slots. kvpress scores each chunk alone,
// kvbench the whole cache at once: the same scores for scorers of one entry at a time (knorm, qfilter, kvzap, …),
// not for those that read the others (keydiff's mean key, snapkv's window).
// Knob length (1..1048576, default 1024), e.g. --policy knorm --allocator chunk:length=512.
#include <algorithm>
#include <memory>

#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/allocators/layer_by_layer.h"

namespace kvbench {

namespace {
class ChunkAllocator final : public Allocator {
 public:
  explicit ChunkAllocator(int64_t length) : length_(length) {}
  std::string name() const override { return "chunk"; }
  std::string summary() const override {
    return "each chunk of `length` slots keeps its own share of the budget, in every layer and head (kvpress "
           "ChunkPress)";
  }
  ScoreKind needs() const override { return ScoreKind::PerToken; }
  bool equal_rows() const override { return true; }  // the same share of every chunk in every row
  at::Tensor keep(const Model&, const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                  const KeepRule& rule) const override {
    return keep_layer_by_layer(scores, cache, budget, rule, name(),
                               [&](const at::Tensor& layer_scores, const at::Tensor& candidates, int64_t layer) {
                                 const int64_t n = candidates.size(-1);
                                 const double ratio = budget.ratio > 0 ? budget.ratio : 1.0 - double(budget.J) / double(n);
                                 const at::Tensor held = cache.head_positions(layer).ge(0).to(candidates.device());
                                 std::vector<at::Tensor> chosen;
                                 for (int64_t start = 0; start < n; start += length_) {
                                   const int64_t c = std::min(length_, n - start);
                                   chosen.push_back(chunk(layer_scores.narrow(-1, start, c), candidates.narrow(-1, start, c),
                                                          held.narrow(-1, start, c), ratio, rule.keep_lowest));
                                 }
                                 return at::cat(chosen, -1);
                               });
  }

 private:
  // A chunk's chosen candidates [B, KV, c]: its share of its held entries, less the protected ones among them.
  static at::Tensor chunk(const at::Tensor& scores, const at::Tensor& candidates, const at::Tensor& held, double ratio,
                          bool keep_lowest) {
    const int64_t c = scores.size(-1);
    const int64_t share = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(c) * (1 - ratio)));
    const at::Tensor protected_count = held.logical_and(candidates.logical_not()).sum(-1, true);
    return best_candidates(scores, candidates, (share - protected_count).clamp_min(0), keep_lowest);
  }

  int64_t length_;
};
}  // namespace

std::unique_ptr<Allocator> make_chunk_allocator(const SpecItems& knobs) {
  return std::make_unique<ChunkAllocator>(knobs.integer("length", 1024, 1, 1 << 20));
}

}  // namespace kvbench
