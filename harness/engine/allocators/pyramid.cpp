// pyramid (PyramidKV, Cai et al. 2024; knob ratio, default 2): layer l has budget B_l
// (in J's units: frozen extra, sinks and recent included) falling linearly from B_0 to B_{L−1} = B_0 / ratio
// with Σ B_l = L·J:
//   B_l = 2J/(1+r) · (r − (r−1)·l/(L−1)),  r = ratio ≥ 1  (L = 1: B_0 = J),
// rounded to whole budgets summing exactly to L·J. Every B_l must be at least sinks + recent (else the
// ratio is refused). Each head of layer l keeps its top (B_l − sinks − recent) candidates by its own
// scores; a token scorer's scores are shared by a layer's heads (h2o and counter-causal: by every layer
// holding the token), so each layer keeps its own top B_l among the entries it holds.
#include "engine/allocators/pyramid.h"

#include <cmath>
#include <memory>

#include "common/error.h"
#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/allocators/layer_by_layer.h"

namespace kvbench {

std::vector<int64_t> pyramid_budgets(int64_t J, int64_t layers, double ratio, int64_t minimum) {
  if (!std::isfinite(ratio) || ratio < 1.0) fail("pyramid ratio must be a finite number ≥ 1 (got {})", ratio);
  std::vector<double> exact(layers);
  for (int64_t l = 0; l < layers; ++l)
    exact[l] = layers == 1 ? static_cast<double>(J)
                           : 2.0 * J / (1.0 + ratio) * (ratio - (ratio - 1.0) * l / static_cast<double>(layers - 1));
  const std::vector<int64_t> budgets = whole_budgets(exact, layers * J);
  for (int64_t l = 0; l < layers; ++l)
    if (budgets[l] < minimum)
      fail("pyramid ratio {} gives layer {} a budget of {}, below the {} entries every head must keep (sinks + recent); "
           "lower the ratio or raise J",
           ratio, l, budgets[l], minimum);
  return budgets;
}

namespace {
class PyramidAllocator final : public Allocator {
 public:
  explicit PyramidAllocator(double ratio) : ratio_(ratio) {}
  std::string name() const override { return "pyramid"; }
  std::string summary() const override {
    return "layer budgets fall linearly from the first layer to the last, `ratio` = the first's / the last's, "
           "summing to layers x J (PyramidKV)";
  }
  ScoreKind needs() const override { return ScoreKind::PerToken; }
  void check_budget(const CacheBudget& budget, const KeepRule& rule, int64_t layers) const override {
    pyramid_budgets(budget.J, layers, ratio_, rule.sinks + rule.recent);
  }
  at::Tensor keep(const Model&, const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                  const KeepRule& rule) const override {
    return keep_by_layer_budgets(scores, cache, budget, rule, name(),
                                 pyramid_budgets(budget.J, cache.num_layers(), ratio_, rule.sinks + rule.recent));
  }

 private:
  double ratio_;
};
}  // namespace

std::unique_ptr<Allocator> make_pyramid_allocator(const SpecItems& knobs) {
  return std::make_unique<PyramidAllocator>(knobs.number("ratio", 2.0, 1.0, 1e6));
}

}  // namespace kvbench
