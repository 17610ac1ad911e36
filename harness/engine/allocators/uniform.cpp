// uniform (the papers' setting, the default): the same J in every layer and KV head, so the cache stays
// one token-level (or per-head) table and any policy serves it, those that keep by position included.
#include <memory>

#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/budget.h"

namespace kvbench {

namespace {
class UniformAllocator final : public Allocator {
 public:
  std::string name() const override { return "uniform"; }
  std::string summary() const override { return "J in every layer and KV head"; }
  ScoreKind needs() const override { return ScoreKind::ByPosition; }
  bool ragged() const override { return false; }
  at::Tensor keep(const Model&, const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                  const KeepRule& rule) const override {
    return select_keep(scores, cache.size(), budget.J, budget.frozen, rule);
  }
};
}  // namespace

std::unique_ptr<Allocator> make_uniform_allocator(const SpecItems&) { return std::make_unique<UniformAllocator>(); }

}  // namespace kvbench
