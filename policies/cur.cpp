// cur (CurDKV, Sengupta et al. 2025, kvpress's CURPress): approximate leverage of keys and values. Each entry's
// squared key norm and squared value norm, normalised within windows of `window` consecutive entries of its
// head (`local`; else over the head), combined by `leverage` — key, value, kv_avg (their mean) or kv_product
// (their product, the default) — and normalised over the head. The first `--sinks` entries score 1, above any
// share, so they stay.
// Knobs: leverage (key|value|kv_avg|kv_product), local (boolean, default true), window (1..65536, default 16),
// e.g. --policy cur:leverage=key,window=32. kvpress's use_random_leverage (a random projection before the norms)
// is left out: it draws from torch's global generator at every call.
#include "policies/layer_scores.h"
#include "policies/rule_policy.h"

namespace kvbench {

namespace {
// x [B, KV, n] divided by its sums over windows of `w` consecutive entries (the last window may be partial).
at::Tensor window_shares(const at::Tensor& x, int64_t w) {
  const int64_t B = x.size(0), KV = x.size(1), n = x.size(2);
  const at::Tensor windows = at::constant_pad_nd(x, {0, (w - n % w) % w}).view({B, KV, -1, w});
  return (windows / windows.sum(-1, true)).view({B, KV, -1}).narrow(2, 0, n);
}

struct CurKnobs {
  std::string leverage;
  bool local;
  int64_t window;
};

at::Tensor cur_sequence_scores(const at::Tensor& keys, const at::Tensor& values, int64_t sinks, const CurKnobs& knobs) {
  at::Tensor k2 = keys.to(at::kFloat).pow(2).sum(-1), v2 = values.to(at::kFloat).pow(2).sum(-1);
  if (knobs.local) k2 = window_shares(k2, knobs.window), v2 = window_shares(v2, knobs.window);
  at::Tensor scores = knobs.leverage == "key"     ? k2
                      : knobs.leverage == "value" ? v2
                      : knobs.leverage == "kv_avg" ? (k2 + v2) / 2
                                                   : k2 * v2;
  scores = scores / scores.sum(-1, true);
  scores.narrow(2, 0, std::min(sinks, scores.size(2))).fill_(1.0);
  return scores;
}
}  // namespace

std::unique_ptr<Policy> make_cur_policy(const PolicyOptions& options) {
  const CurKnobs knobs{options.knobs.choice("leverage", "kv_product", {"key", "value", "kv_avg", "kv_product"}),
                       options.knobs.boolean("local", true), options.knobs.integer("window", 16, 1, 65536)};
  return per_head_rule(
      "cur",
      "per KV head: squared key and value norms as shares of their `window` (CurDKV's approximate leverage), "
      "combined by `leverage`; `--sinks` stay (kvpress CURPress)",
      [knobs](const ScoringContext& context, int64_t layer, const at::Tensor& positions) {
        return score_held_sequences(positions, {context.cache.keys(layer), context.cache.values(layer)},
                                    [&](const std::vector<at::Tensor>& rows) {
                                      return cur_sequence_scores(rows[0], rows[1], context.budget.sinks, knobs);
                                    });
      });
}

}  // namespace kvbench
