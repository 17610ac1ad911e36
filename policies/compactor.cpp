// compactor (Compactor, Chari & Van Durme 2025, kvpress's CompactorPress): query-agnostic. Per KV head, the
// keys' approximate leverage (leverage.cpp) weighted by `blending`, plus the non-causal tiled attention
// (non-causal-attention.cpp), both computed over the entries between the first 8 and the last 4, which score
// above the rest and stay.
// Knobs: blending (a weight ≥ 0, or `ratio`, the default: the compression ratio, as kvpress's blending=None —
// a token budget's share of entries evicted), sketch (default 48), chunk (default 256), seed (default 0), e.g.
// --policy compactor:blending=0.35.
#include <cmath>
#include <limits>
#include <string>

#include "common/error.h"
#include "policies/compactor_scores.h"

namespace kvbench {

namespace {
// The leverage weight `blending` gives; −1 for `ratio`.
double blending_weight(const SpecItems& knobs) {
  const std::string text = knobs.string("blending", "ratio");
  if (text == "ratio") return -1;
  size_t used = 0;
  double weight = -1;
  try {
    weight = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || !std::isfinite(weight) || weight < 0)
    fail("{}: knob blending must be `ratio` or a number ≥ 0 (got \"{}\")", knobs.context(), text);
  return weight;
}
}  // namespace

std::unique_ptr<Policy> make_compactor_policy(const PolicyOptions& options) {
  CompactorRule rule;
  rule.name = "compactor";
  rule.summary = "per KV head: approximate key leverage × `blending` + non-causal tiled attention × ‖v‖; the "
                 "first 8 and last 4 entries stay (kvpress CompactorPress)";
  rule.leverage = rule.attention = true;
  rule.blending = blending_weight(options.knobs);
  rule.sketch = options.knobs.integer("sketch", 48, 1, 4096);
  rule.chunk = options.knobs.integer("chunk", 256, 1, 65536);
  rule.seed = static_cast<uint64_t>(options.knobs.integer("seed", 0, 0, std::numeric_limits<int64_t>::max()));
  rule.protect_first = 8, rule.protect_last = 4;
  return compactor_policy(rule);
}

}  // namespace kvbench
