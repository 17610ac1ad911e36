// critical (CriticalKV, Feng et al. 2025; kvpress's CriticalKVPress and CriticalAdaKVPress): an entry matters by its
// attention score and by what its value adds to the layer's output, ‖v W_o‖₁. Each head keeps, of its budget, the
// `first_stage` share by the policy's scores, then fills the rest by (score + epsilon) · ‖v W_o‖₁ (the L1 norm of the
// entry's value through each query head's slice of W_o, averaged over the KV head's group). With a ratio budget R
// the first stage is ⌊(1 − R)·n·first_stage⌋ of a head's n entries, as kvpress counts it; else ⌊J·first_stage⌋; at
// least one when first_stage > 0. Protected entries (sinks, recent) count inside the first stage.
// With `ada` (CriticalAdaKVPress) a layer's heads share its budget as --allocator ada does, by the policy's scores
// with each head's best ⌊safeguard · share⌋ first (at least one when safeguard > 0); within a head the first
// `first_stage` of its share by those scores, the rest by the weighted ones.
// Knobs: epsilon (kvpress 1e-4), first_stage (first_stage_ratio, 0.5), ada (false), safeguard (alpha_safeguard, 0.2).
#include <algorithm>
#include <limits>
#include <memory>

#include "common/error.h"
#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/allocators/layer_by_layer.h"
#include "model/model.h"

namespace kvbench {

namespace {
constexpr double kTop = std::numeric_limits<double>::infinity();  // ranks above every weighted score

// ‖v W_o‖₁ per entry of layer `layer` [B, KV, n]: each query head's value (its KV head's) through its slice of W_o,
// the L1 norm over the hidden size, averaged over the KV head's group of query heads. One head at a time: the
// product of all of them at once is n × hidden per query head.
at::Tensor projected_value_norms(const Model& model, const KvCache& cache, int64_t layer) {
  const ModelConfig& config = model.config();
  const at::Tensor values = cache.values(layer).to(at::kFloat);  // [B, KV, n, D]
  const int64_t heads = config.num_heads, kv_heads = values.size(1), group = heads / kv_heads, d = values.size(-1);
  // o_proj [hidden, heads · D] → per query head [D, hidden]
  const at::Tensor wo = model.weights().layers[layer].o_proj.to(values.device(), at::kFloat).t().reshape({heads, d, -1});
  std::vector<at::Tensor> per_kv_head;
  for (int64_t kv = 0; kv < kv_heads; ++kv) {
    at::Tensor sum;
    for (int64_t g = 0; g < group; ++g) {
      const at::Tensor norm = at::norm(at::matmul(values.select(1, kv), wo[kv * group + g]), 1, {-1});  // [B, n]
      sum = sum.defined() ? sum + norm : norm;
    }
    per_kv_head.push_back(sum / static_cast<double>(group));
  }
  return at::stack(per_kv_head, 1);
}

class CriticalAllocator final : public Allocator {
 public:
  CriticalAllocator(double epsilon, double first_stage, bool ada, double safeguard)
      : epsilon_(epsilon), first_stage_(first_stage), ada_(ada), safeguard_(safeguard) {}
  std::string name() const override { return "critical"; }
  std::string summary() const override {
    return "keeps `first_stage` of each head's budget by the policy's scores, the rest by those scores times the L1 "
           "norm of the entry's value through W_o; `ada` shares a layer's budget among its heads (CriticalKV)";
  }
  ScoreKind needs() const override { return ScoreKind::PerKvHead; }
  bool equal_rows() const override { return !ada_; }
  void check_budget(const CacheBudget&, const KeepRule& rule, int64_t) const override {
    if (rule.keep_lowest) fail("allocator critical weighs scores that rank high; this policy keeps its lowest");
  }
  at::Tensor keep(const Model& model, const at::Tensor& scores, const KvCache& cache, const CacheBudget& budget,
                  const KeepRule& rule) const override {
    const int64_t per_head = std::max<int64_t>(budget.J - rule.sinks - rule.recent, 0);
    return keep_layer_by_layer(scores, cache, budget, rule, name(),
                               [&](const at::Tensor& layer_scores, const at::Tensor& candidates, int64_t layer) {
                                 const at::Tensor s = layer_scores.to(at::kFloat);
                                 const at::Tensor norms = projected_value_norms(model, cache, layer).to(s.device());
                                 return ada_ ? keep_ada(s, norms, candidates, per_head)
                                             : keep_head(s, norms, candidates, per_head, first_stage_count(budget, cache, rule));
                               });
  }

 private:
  // Candidates of the first stage in each head: its share of the head's kept entries, less the protected ones.
  int64_t first_stage_count(const CacheBudget& budget, const KvCache& cache, const KeepRule& rule) const {
    const double n = static_cast<double>(cache.size() - budget.frozen);
    int64_t count = budget.ratio > 0 ? static_cast<int64_t>((1 - budget.ratio) * n * first_stage_)
                                     : static_cast<int64_t>(static_cast<double>(budget.J) * first_stage_);
    if (first_stage_ > 0) count = std::max<int64_t>(count, 1);
    return std::max<int64_t>(count - rule.sinks - rule.recent, 0);
  }

  // The entries [B, KV, n] a head keeps of `take` ([B, KV, 1] or a count): its best `first` by `s`, then the rest by
  // (s + epsilon) · norms. `top` marks entries that rank first in the second stage whatever they weigh.
  at::Tensor two_stages(const at::Tensor& s, const at::Tensor& norms, const at::Tensor& candidates, const at::Tensor& first,
                        const at::Tensor& take, const at::Tensor& top) const {
    const at::Tensor first_stage = best_candidates(s, candidates, first, false);
    const at::Tensor weighted = at::where(first_stage.logical_or(top), at::full_like(s, kTop), (s + epsilon_) * norms);
    return best_candidates(weighted, candidates, take, false);
  }

  at::Tensor keep_head(const at::Tensor& s, const at::Tensor& norms, const at::Tensor& candidates, int64_t per_head,
                       int64_t first) const {
    const at::Tensor row = at::ones({s.size(0), s.size(1), 1}, s.options().dtype(at::kLong));
    return two_stages(s, norms, candidates, row * std::min(first, per_head), row * per_head, at::zeros_like(candidates));
  }

  // CriticalAdaKV: head shares from the policy's scores (each head's safeguarded best first), then two stages in each.
  at::Tensor keep_ada(const at::Tensor& s, const at::Tensor& norms, const at::Tensor& candidates, int64_t per_head) const {
    int64_t safe = static_cast<int64_t>(safeguard_ * static_cast<double>(per_head));
    if (safeguard_ > 0 && per_head > 0) safe = std::max<int64_t>(safe, 1);
    const at::Tensor safeguarded = best_candidates(s, candidates, safe, false);
    const at::Tensor ranked = at::where(safeguarded, at::full_like(s, kTop), s);
    const at::Tensor pooled =
        best_candidates(ranked.flatten(1), candidates.flatten(1), candidates.size(1) * per_head, false).view_as(candidates);
    const at::Tensor share = pooled.sum(-1, /*keepdim=*/true);  // [B, KV, 1]
    const at::Tensor first = (share.to(at::kDouble) * first_stage_).to(at::kLong);
    return two_stages(ranked, norms, candidates, first, share, safeguarded);
  }

  double epsilon_, first_stage_;
  bool ada_;
  double safeguard_;
};
}  // namespace

std::unique_ptr<Allocator> make_critical_allocator(const SpecItems& knobs) {
  return std::make_unique<CriticalAllocator>(knobs.number("epsilon", 1e-4, 0.0, 1.0), knobs.number("first_stage", 0.5, 0.0, 1.0),
                                             knobs.boolean("ada", false), knobs.number("safeguard", 0.2, 0.0, 1.0));
}

}  // namespace kvbench
