// kvzap (KVzap, Jégou et al. 2026, as kvpress's KVzapPress): a small model per layer, trained to approximate KVzip,
// reads each token's attention input (the layer's hidden state after its input norm) and predicts a score per KV
// head; the highest stay. The surrogates are read from `model`: the directory KVzapModel.save_pretrained writes
// (config.json: input_dim, output_dim, n_modules, hidden_dim; model.safetensors), as the hub's nvidia/KVzap-linear-*
// and nvidia/KVzap-mlp-* are: per layer a linear map (hidden_dim null) or Linear → GELU → Linear. An entry's score
// is computed once, when its token is fed (in float32). kvpress runs it under DMSPress (evict below a threshold,
// leaderboard kvzap_linear / kvzap_mlp: not here), alone (kvzap_mlp_head) or under AdaKV (kvzap_mlp_layer:
// --allocator ada:safeguard=0.2).
// Knob model (a path; required to run), e.g. --policy kvzap:model=kvzap/KVzap-mlp-Qwen3-8B.
#include <filesystem>

#include "common/error.h"
#include "common/json_file.h"
#include "model/safetensors.h"
#include "policies/layer_scores.h"
#include "policies/policy.h"

namespace kvbench {

namespace {

// One layer's surrogate: Linear, or Linear → GELU → Linear.
struct Surrogate {
  at::Tensor weight, bias, out_weight, out_bias;  // out_*: the MLP's second layer (undefined for a linear one)

  at::Tensor operator()(const at::Tensor& x) const {  // [B, T, hidden] → [B, T, KV]
    const at::Tensor h = at::linear(x.to(at::kFloat), weight, bias);
    return out_weight.defined() ? at::linear(at::gelu(h), out_weight, out_bias) : h;
  }
};

struct Surrogates {
  std::string path;
  int64_t input_dim = 0, output_dim = 0;
  std::vector<Surrogate> layers;
};

Surrogates read_surrogates(const std::string& path) {
  const std::filesystem::path dir(path), config_file = dir / "config.json", weights_file = dir / "model.safetensors";
  if (!std::filesystem::is_regular_file(config_file) || !std::filesystem::is_regular_file(weights_file))
    fail("kvzap: {} holds no config.json and model.safetensors (give the directory KVzapModel.save_pretrained writes)",
         path);
  const nlohmann::json config = read_json_file(config_file);
  const auto integer = [&](const char* key) {
    if (!config.contains(key) || !config[key].is_number_integer()) fail("{}: \"{}\" must be an integer", config_file.string(), key);
    return config[key].get<int64_t>();
  };
  Surrogates s{path, integer("input_dim"), integer("output_dim"), {}};
  const bool mlp = config.contains("hidden_dim") && !config["hidden_dim"].is_null();
  const SafetensorsFile tensors(weights_file);
  const auto tensor = [&](const std::string& name) {
    if (!tensors.tensors().count(name)) fail("{}: no tensor \"{}\"", weights_file.string(), name);
    return tensors.view(name).to(at::kFloat).clone();
  };
  for (int64_t i = 0, n = integer("n_modules"); i < n; ++i) {
    const std::string layer = "layers." + std::to_string(i) + (mlp ? ".0." : ".");
    Surrogate m{tensor(layer + "weight"), tensor(layer + "bias")};
    if (mlp) m.out_weight = tensor("layers." + std::to_string(i) + ".2.weight"), m.out_bias = tensor("layers." + std::to_string(i) + ".2.bias");
    s.layers.push_back(std::move(m));
  }
  return s;
}

class KvzapPolicy final : public Policy {
 public:
  explicit KvzapPolicy(Surrogates surrogates) : surrogates_(std::move(surrogates)) {}
  std::string name() const override { return "kvzap"; }
  std::string summary() const override {
    return "per KV head: a learned surrogate of KVzip on each token's attention input, read from `model` (kvpress "
           "KVzapPress)";
  }
  PolicyNeeds needs() const override {
    PolicyNeeds needs;
    needs.step_attention_inputs = true;
    return needs;
  }
  KeepRule keep_rule(const CacheBudget& budget) const override { return {false, budget.recent, Granularity::PerKvHead}; }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }

  void prepare(const Preparation& preparation) override {  // before the first token, not at the first refresh
    if (surrogates_.layers.empty()) fail("kvzap needs its surrogates: --policy kvzap:model=DIR (kvpress's KVzapModel)");
    const ModelConfig& c = preparation.model.config();
    if (static_cast<int64_t>(surrogates_.layers.size()) != c.num_layers || surrogates_.input_dim != c.hidden_size ||
        surrogates_.output_dim != c.num_kv_heads)
      fail("{}: the surrogates map {} inputs to {} scores in {} layers; the model has hidden size {}, {} KV heads and "
           "{} layers",
           surrogates_.path, surrogates_.input_dim, surrogates_.output_dim, surrogates_.layers.size(), c.hidden_size,
           c.num_kv_heads, c.num_layers);
  }

  // Each forward's scores of its tokens [B, KV, T] per layer, in order: together, each fed token's by position.
  void observe(const ForwardResult& step, const KvCache&) override {
    if (fed_.empty()) fed_.resize(step.attention_inputs.size());
    for (size_t l = 0; l < step.attention_inputs.size(); ++l)
      fed_[l].push_back(surrogates_.layers[l](step.attention_inputs[l]).transpose(1, 2));
  }

  at::Tensor score(const ScoringContext& context) override {
    return score_each_layer(context.cache, [&](int64_t layer, const at::Tensor& positions) {
      std::vector<at::Tensor>& steps = fed_.at(layer);
      steps = {at::cat(steps, 2)};  // [B, KV, tokens fed]; joined once per refresh, not at every step
      const at::Tensor& fed = steps.front();
      return fed.gather(2, positions.clamp_min(0).to(fed.device())).masked_fill(positions.lt(0).to(fed.device()), 0);
    });
  }

  void expand_batch(int64_t batch) override {
    for (auto& steps : fed_)
      for (at::Tensor& scores : steps) scores = scores.expand({batch, scores.size(1), scores.size(2)}).contiguous();
  }
  void reset() override { fed_.clear(); }

 private:
  Surrogates surrogates_;
  std::vector<std::vector<at::Tensor>> fed_;  // per layer, the forwards' scores in order
};

}  // namespace

std::unique_ptr<Policy> make_kvzap_policy(const PolicyOptions& options) {
  const std::string path = options.knobs.string("model", "");
  return std::make_unique<KvzapPolicy>(path.empty() ? Surrogates{} : read_surrogates(path));
}

}  // namespace kvbench
