// qfilter (Q-Filters, Godey et al. 2025, kvpress's QFilterPress): a learned direction per layer and KV head that
// the queries' attention follows; an entry scores −⟨filter, k⟩ with its key after RoPE, and the highest stay.
// The filters are read from `filters`: the directory kvpress's QFilters.save_pretrained writes (model.safetensors
// holding "q_filters" [layers, KV heads, head dim], as the nthngdy/*_qfilt checkpoints on the HF hub are), or
// that .safetensors file itself.
// Knob filters (a path; required to run), e.g. --policy qfilter:filters=qfilters/Llama-3.1-8B-Instruct_qfilt.
#include <filesystem>

#include "common/error.h"
#include "model/safetensors.h"
#include "policies/layer_scores.h"
#include "policies/policy.h"

namespace kvbench {

namespace {
at::Tensor read_filters(const std::string& path) {
  std::filesystem::path file(path);
  if (std::filesystem::is_directory(file)) file /= "model.safetensors";
  if (!std::filesystem::is_regular_file(file))
    fail("qfilter: {} not found (give kvpress's QFilters directory or its model.safetensors)", file.string());
  const SafetensorsFile tensors(file);
  if (!tensors.tensors().count("q_filters")) fail("{}: no tensor \"q_filters\"", file.string());
  at::Tensor filters = tensors.view("q_filters").to(at::kFloat).clone();
  if (filters.dim() != 3) fail("{}: \"q_filters\" must be [layers, KV heads, head dim], not {}-dimensional", file.string(), filters.dim());
  return filters;
}

class QFilterPolicy final : public Policy {
 public:
  QFilterPolicy(std::string path, at::Tensor filters) : path_(std::move(path)), filters_(std::move(filters)) {}
  std::string name() const override { return "qfilter"; }
  std::string summary() const override {
    return "per KV head: −⟨learned filter, key⟩, the filters read from `filters` (kvpress QFilterPress)";
  }
  KeepRule keep_rule(const CacheBudget& budget) const override { return {false, budget.recent, Granularity::PerKvHead}; }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  void prepare(const Preparation& preparation) override {  // before the first token, not at the first refresh
    if (!filters_.defined()) fail("qfilter needs its filters: --policy qfilter:filters=DIR (kvpress's QFilters)");
    const ModelConfig& c = preparation.model.config();
    if (filters_.size(0) != c.num_layers || filters_.size(1) != c.num_kv_heads || filters_.size(2) != c.head_dim)
      fail("{}: q_filters is [{}, {}, {}], the model has {} layers × {} KV heads × head dim {}", path_,
           filters_.size(0), filters_.size(1), filters_.size(2), c.num_layers, c.num_kv_heads, c.head_dim);
  }
  at::Tensor score(const ScoringContext& context) override {
    return score_each_layer(context.cache, [&](int64_t layer, const at::Tensor&) {
      const at::Tensor keys = context.cache.keys(layer);  // [B, KV, N, D]
      const at::Tensor filter = filters_[layer].to(keys.options()).view({1, keys.size(1), 1, keys.size(3)});
      return -(filter * keys).sum(-1).to(at::kFloat);
    });
  }

 private:
  std::string path_;
  at::Tensor filters_;  // [L, KV, D] float32
};
}  // namespace

std::unique_ptr<Policy> make_qfilter_policy(const PolicyOptions& options) {
  const std::string path = options.knobs.string("filters", "");
  return std::make_unique<QFilterPolicy>(path, path.empty() ? at::Tensor() : read_filters(path));
}

}  // namespace kvbench
