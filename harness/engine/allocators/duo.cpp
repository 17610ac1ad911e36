// duo (DuoAttention, Xiao et al. 2024, kvpress's DuoAttentionPress): retrieval heads keep every entry, streaming
// heads only what the policy keeps. The `heads` share of all (layer, KV head) pairs with the lowest scores in
// `patterns` are the streaming heads; they keep their protected entries, so with `--policy streaming` the first
// `--sinks` and the newest J − sinks, DuoAttention's sink and recent windows (its patterns' config.json:
// sink_size = --sinks, sink_size + recent_size = J). The policy's scores are not read. The cache is ragged.
// `patterns`: a directory of DuoAttention's attn_patterns (mit-han-lab/duo-attention), whose
// full_attention_heads.tsv holds a score per layer (row) and KV head (column), clipped to [0, 1] as it loads them.
// Knobs: patterns (a directory; required to run), heads (0..1, default 0: kvpress's head_compression_ratio), e.g.
// --policy streaming --sinks 128 --J 384 --allocator duo:patterns=attn_patterns/Llama-3.1-8B,heads=0.5.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include "common/error.h"
#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/allocators/layer_by_layer.h"

namespace kvbench {

namespace {
// full_attention_heads.tsv: one row per layer, one tab-separated score per KV head, clipped to [0, 1].
std::vector<std::vector<double>> head_scores(const std::string& directory) {
  const std::string file = directory + "/full_attention_heads.tsv";
  std::ifstream in(file);
  if (!in) fail("allocator duo: {} not found (give a directory of DuoAttention's attn_patterns)", file);
  std::vector<std::vector<double>> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::istringstream cells(line);
    std::vector<double> row;
    for (std::string cell; std::getline(cells, cell, '\t');) {
      try {
        row.push_back(std::clamp(std::stod(cell), 0.0, 1.0));
      } catch (const std::exception&) {
        fail("{}: line {}: \"{}\" is not a number", file, rows.size() + 1, cell);
      }
    }
    if (!rows.empty() && row.size() != rows.front().size())
      fail("{}: line {} has {} scores, line 1 has {}", file, rows.size() + 1, row.size(), rows.front().size());
    rows.push_back(std::move(row));
  }
  if (rows.empty()) fail("{}: no scores", file);
  return rows;
}

class DuoAllocator final : public Allocator {
 public:
  DuoAllocator(std::string patterns, double heads) : patterns_(std::move(patterns)), heads_(heads) {
    if (!patterns_.empty()) head_scores(patterns_);  // a bad file fails with the spec, before any generation
  }
  std::string name() const override { return "duo"; }
  std::string summary() const override {
    return "retrieval heads keep everything, the `heads` share with the lowest DuoAttention scores (`patterns`) "
           "keep what the policy protects: sinks and recent with streaming (DuoAttention)";
  }
  ScoreKind needs() const override { return ScoreKind::ByPosition; }
  void check_budget(const CacheBudget&, const KeepRule&, int64_t layers) const override {  // before generation
    if (patterns_.empty()) fail("allocator duo needs its patterns: --allocator duo:patterns=DIR,heads=R");
    if (const auto scores = head_scores(patterns_); static_cast<int64_t>(scores.size()) != layers)
      fail("{}/full_attention_heads.tsv: {} layers, the model has {}", patterns_, scores.size(), layers);
  }
  at::Tensor keep(const Model&, const at::Tensor&, const KvCache& cache, const CacheBudget& budget,
                  const KeepRule& rule) const override {
    const at::Tensor streaming = streaming_heads(cache.num_layers(), cache.keys(0).size(1));  // [L, KV]
    return keep_layer_by_layer(at::Tensor(), cache, budget, rule, name(),
                               [&](const at::Tensor&, const at::Tensor& candidates, int64_t layer) {
                                 return candidates.logical_and(streaming[layer].logical_not().view({1, -1, 1}).to(candidates.device()));
                               });
  }

 private:
  // The round(heads · L · KV) lowest-scoring (layer, KV head) pairs (ties: the earlier pair), as kvpress marks them.
  // The file is read at each use: an allocator is made once per spec in a process, and the file may be rewritten
  // (a Python session writing patterns, a test's models one after another).
  at::Tensor streaming_heads(int64_t layers, int64_t kv_heads) const {
    const auto scores = head_scores(patterns_);
    if (static_cast<int64_t>(scores.size()) != layers || static_cast<int64_t>(scores.front().size()) != kv_heads)
      fail("{}/full_attention_heads.tsv: {} layers × {} KV heads, the model has {} × {}", patterns_, scores.size(),
           scores.front().size(), layers, kv_heads);
    std::vector<double> flat;
    for (const auto& row : scores) flat.insert(flat.end(), row.begin(), row.end());
    const at::Tensor order = std::get<1>(at::tensor(flat, at::kDouble).sort(/*stable=*/true, 0, /*descending=*/false));
    const auto pruned = static_cast<int64_t>(std::nearbyint(heads_ * static_cast<double>(flat.size())));  // half to even, as Python's round
    return at::zeros({layers * kv_heads}, at::kBool).index_fill_(0, order.narrow(0, 0, pruned), true).view({layers, kv_heads});
  }

  std::string patterns_;
  double heads_;
};
}  // namespace

std::unique_ptr<Allocator> make_duo_allocator(const SpecItems& knobs) {
  return std::make_unique<DuoAllocator>(knobs.string("patterns", ""), knobs.number("heads", 0.0, 0.0, 1.0));
}

}  // namespace kvbench
