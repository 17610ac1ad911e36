// dms (the threshold eviction of Dynamic Memory Sparsification, kvpress's DMSPress): every (layer, KV head) row
// drops each entry scoring below `threshold` (above it with a keep-lowest policy), except its newest `window`
// entries, so how much a row keeps depends on what it holds, not on J: a job with dms gives no J or ratio, and
// every refresh point refreshes. With --mode prefill_end it is DMSPress at its default decoding=False (the context
// thinned once, at its end). kvpress judges an entry once, as it leaves the window; a refresh here judges every
// entry it holds by the policy's current scores, the same wherever an entry's score never changes (kvzap, knorm).
// Knobs: threshold (required; kvpress's default None), window (kvpress's sliding_window_size, default 128).
// The policy's own protected entries (sinks, recent) stay as with every allocator.
#include <cmath>
#include <limits>
#include <memory>

#include "common/error.h"
#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/allocators/layer_by_layer.h"

namespace kvbench {

namespace {
class DmsAllocator final : public Allocator {
 public:
  DmsAllocator(double threshold, int64_t window) : threshold_(threshold), window_(window) {}
  std::string name() const override { return "dms"; }
  std::string summary() const override {
    return "keeps by a score threshold instead of J: each row drops the entries scoring below `threshold` outside "
           "its newest `window` (DMS)";
  }
  ScoreKind needs() const override { return ScoreKind::PerToken; }
  bool own_budget() const override { return true; }
  void check_budget(const CacheBudget&, const KeepRule&, int64_t) const override {
    if (std::isnan(threshold_)) fail("allocator dms needs its threshold: --allocator dms:threshold=T");
  }
  at::Tensor keep(const Model&, const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                  const KeepRule& rule) const override {
    return keep_layer_by_layer(scores, cache, budget, rule, name(),
                               [&](const at::Tensor& layer_scores, const at::Tensor& candidates, int64_t layer) {
                                 const at::Tensor s = layer_scores.to(at::kDouble);
                                 // kvpress evicts where score < threshold, so a NaN score stays.
                                 const at::Tensor dropped = rule.keep_lowest ? s.gt(threshold_) : s.lt(threshold_);
                                 const at::Tensor kept = dropped.logical_not().logical_or(in_window(cache, layer));
                                 return candidates.logical_and(kept);
                               });
  }

 private:
  at::Tensor in_window(const KvCache& cache, int64_t layer) const { return held_at_edges(cache, layer, 0, window_); }

  double threshold_;
  int64_t window_;
};
}  // namespace

std::unique_ptr<Allocator> make_dms_allocator(const SpecItems& knobs) {
  const double required = std::numeric_limits<double>::quiet_NaN();  // never equal to a given value
  return std::make_unique<DmsAllocator>(knobs.number("threshold", required, -1e30, 1e30),
                                        knobs.integer("window", 128, 0, std::numeric_limits<int32_t>::max()));
}

}  // namespace kvbench
