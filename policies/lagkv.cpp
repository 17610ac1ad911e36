// lagkv (LagKV, Liang et al. 2025, kvpress's LagKVPress): an entry is scored against the partition that
// follows it. After `--sinks` entries, a head's sequence is cut into partitions of `lag` entries; each
// partition's keys and values are min-max scaled by the next partition's range per channel, and an entry's
// score is the softmax over its partition of the spread (std) of its scaled channels, keys and values
// averaged, then turned into its rank within the partition (unless `cross`, which keeps the softmax values so
// partitions compete). The sinks and the last partition with its remainder score 1, above every rank, so they
// stay; a sequence shorter than sinks + 2·lag ranks its entries by position (the newest stay).
// Knobs: lag (1..65536, default 128), cross (boolean, default false), e.g. --policy lagkv:lag=64.
#include "policies/layer_scores.h"
#include "policies/rule_policy.h"

namespace kvbench {

namespace {
// Per partition but the last, [B, KV, P−1, lag]: the softmax over the partition of each entry's spread once
// scaled by the next partition's min-max range per channel.
at::Tensor lag_relative(const at::Tensor& partitions) {  // [B, KV, P, lag, D]
  const int64_t P = partitions.size(2);
  const at::Tensor reference = partitions.narrow(2, 1, P - 1), scored = partitions.narrow(2, 0, P - 1);
  const at::Tensor low = std::get<0>(reference.min(-2, true)), high = std::get<0>(reference.max(-2, true));
  return ((scored - low) / (high - low)).std(-1).softmax(-1);
}

at::Tensor lagkv_sequence_scores(const at::Tensor& keys, const at::Tensor& values, int64_t sinks, int64_t lag,
                                 bool cross) {
  const int64_t B = keys.size(0), KV = keys.size(1), n = keys.size(2), D = keys.size(3);
  const auto options = keys.options().dtype(at::kFloat);
  if (n < sinks + 2 * lag) {  // too short to partition: the newest entries rank highest
    at::Tensor score = at::ones({B, KV, n}, options);
    if (n > sinks) score.narrow(2, sinks, n - sinks).copy_(at::arange(n - sinks, options) / static_cast<double>(n - sinks));
    return score;
  }
  const int64_t end = sinks + (n - sinks) / lag * lag, tail = lag + n - end;
  auto partitioned = [&](const at::Tensor& x) { return x.narrow(2, sinks, end - sinks).to(at::kFloat).view({B, KV, -1, lag, D}); };
  at::Tensor score = (lag_relative(partitioned(keys)) + lag_relative(partitioned(values))) / 2;
  if (!cross) {  // each entry's rank within its partition
    const at::Tensor order = std::get<1>(score.sort(-1));
    score = std::get<1>(order.sort(-1)).to(at::kFloat) / static_cast<double>(lag);
  }
  return at::cat({at::ones({B, KV, sinks}, options), score.reshape({B, KV, -1}), at::ones({B, KV, tail}, options)}, -1);
}
}  // namespace

std::unique_ptr<Policy> make_lagkv_policy(const PolicyOptions& options) {
  const int64_t lag = options.knobs.integer("lag", 128, 1, 65536);
  const bool cross = options.knobs.boolean("cross", false);
  return per_head_rule(
      "lagkv",
      "per KV head: each `lag`-entry partition's keys and values scaled by the next partition's range, ranked by "
      "their spread; `--sinks` and the newest partition stay (kvpress LagKVPress)",
      [lag, cross](const ScoringContext& context, int64_t layer, const at::Tensor& positions) {
        return score_held_sequences(positions, {context.cache.keys(layer), context.cache.values(layer)},
                                    [&](const std::vector<at::Tensor>& rows) {
                                      return lagkv_sequence_scores(rows[0], rows[1], context.budget.sinks, lag, cross);
                                    });
      });
}

}  // namespace kvbench
