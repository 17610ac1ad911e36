// layers (kvpress's PerLayerCompressionPress): layer l compresses by its own ratio r_l, keeping in each head its
// best n_l of the n entries it holds (frozen prefix aside), n_l = ⌊n·(1 − r_l)⌋ and at least 1 (none when
// r_l ≥ 1), as kvpress counts them. The ratios are the budget, so a job gives no J; one compression, at the prompt's end (--mode
// prefill_end), as the press compresses once. Protected entries (sinks, recent) count inside n_l, as with pyramid.
// Knob ratios: one ratio in [0, 1] per layer, `/`-separated ("layers:ratios=0.2/0.5/0.8/0.8"), required.
#include <cmath>
#include <memory>
#include <vector>

#include "common/error.h"
#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/allocators/layer_by_layer.h"

namespace kvbench {

namespace {
class LayersAllocator final : public Allocator {
 public:
  explicit LayersAllocator(std::vector<double> ratios) : ratios_(std::move(ratios)) {}
  std::string name() const override { return "layers"; }
  std::string summary() const override {
    return "each layer compresses by its own ratio from `ratios` (one per layer, /-separated) instead of J "
           "(kvpress PerLayerCompressionPress)";
  }
  ScoreKind needs() const override { return ScoreKind::PerToken; }
  bool own_budget() const override { return true; }
  void check_budget(const CacheBudget& budget, const KeepRule&, int64_t layers) const override {
    if (ratios_.empty()) fail("allocator layers needs a ratio per layer: --allocator layers:ratios=R0/R1/...");
    if (static_cast<int64_t>(ratios_.size()) != layers)
      fail("allocator layers: {} ratios for a model of {} layers", ratios_.size(), layers);
    if (budget.mode != CacheBudget::Mode::PrefillEnd)
      fail("allocator layers compresses once, by its ratios: it needs --mode prefill_end");
  }
  at::Tensor keep(const Model&, const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                  const KeepRule& rule) const override {
    const double n = static_cast<double>(cache.size() - budget.frozen);
    std::vector<int64_t> budgets;
    for (const double r : ratios_)
      budgets.push_back(r >= 1 ? 0 : std::max<int64_t>(1, static_cast<int64_t>(n * (1 - r))));
    return keep_by_layer_budgets(scores, cache, budget, rule, name(), budgets);
  }

 private:
  std::vector<double> ratios_;
};
}  // namespace

std::unique_ptr<Allocator> make_layers_allocator(const SpecItems& knobs) {
  return std::make_unique<LayersAllocator>(
      number_list(knobs.string("ratios", ""), '/', 0, 1, fmt::format("{}: ratios", knobs.context())));
}

}  // namespace kvbench
