#include "model/weights.h"

#include <fmt/ranges.h>

#include "common/error.h"
#include "model/huge_pages.h"
#include "model/tensor_source.h"

namespace kvbench {

namespace {

class WeightLoader {
 public:
  WeightLoader(const std::filesystem::path& model, const ModelConfig& config, at::Device device, at::ScalarType dtype)
      : source_(open_tensor_source(model, config)), device_(device), dtype_(dtype) {}

  bool has(const std::string& name) const { return source_->contains(name); }

  at::Tensor load(const std::string& name, std::vector<int64_t> expected) {
    const std::vector<int64_t> shape = source_->shape(name);  // throws "missing tensor" naming the file
    if (shape != expected)
      fail("{} has shape [{}], expected [{}] from {}", source_->where(name), fmt::join(shape, ", "),
           fmt::join(expected, ", "), source_->config_origin());
    return arena_.copy_of(source_->read(name), device_, dtype_);
  }

  at::Tensor load_if(bool present, const std::string& name, std::vector<int64_t> expected) {
    return present ? load(name, std::move(expected)) : at::Tensor();
  }

 private:
  std::unique_ptr<TensorSource> source_;
  HugePageArena arena_;  // every tensor is a copy: the source's mapping closes after loading
  at::Device device_;
  at::ScalarType dtype_;
};

LayerWeights load_layer(WeightLoader& w, const ModelConfig& c, int64_t layer) {
  const std::string p = fmt::format("model.layers.{}.", layer);
  const int64_t hidden = c.hidden_size, inter = c.intermediate_size;
  const int64_t q_out = c.num_heads * c.head_dim, kv_out = c.num_kv_heads * c.head_dim;
  LayerWeights l;
  l.input_norm = w.load(p + "input_layernorm.weight", {hidden});
  l.post_attention_norm = w.load(p + "post_attention_layernorm.weight", {hidden});
  l.q_proj = w.load(p + "self_attn.q_proj.weight", {q_out, hidden});
  l.k_proj = w.load(p + "self_attn.k_proj.weight", {kv_out, hidden});
  l.v_proj = w.load(p + "self_attn.v_proj.weight", {kv_out, hidden});
  l.o_proj = w.load(p + "self_attn.o_proj.weight", {hidden, q_out});
  l.q_bias = w.load_if(c.qkv_bias, p + "self_attn.q_proj.bias", {q_out});
  l.k_bias = w.load_if(c.qkv_bias, p + "self_attn.k_proj.bias", {kv_out});
  l.v_bias = w.load_if(c.qkv_bias, p + "self_attn.v_proj.bias", {kv_out});
  l.o_bias = w.load_if(c.o_bias, p + "self_attn.o_proj.bias", {hidden});
  l.q_norm = w.load_if(c.qk_norm, p + "self_attn.q_norm.weight", {c.head_dim});
  l.k_norm = w.load_if(c.qk_norm, p + "self_attn.k_norm.weight", {c.head_dim});
  l.k_smear = w.load_if(c.key_smear && layer == 0, p + "self_attn.k_smear", {c.num_kv_heads});
  l.gate_proj = w.load(p + "mlp.gate_proj.weight", {inter, hidden});
  l.up_proj = w.load(p + "mlp.up_proj.weight", {inter, hidden});
  l.down_proj = w.load(p + "mlp.down_proj.weight", {hidden, inter});
  l.gate_bias = w.load_if(c.mlp_bias, p + "mlp.gate_proj.bias", {inter});
  l.up_bias = w.load_if(c.mlp_bias, p + "mlp.up_proj.bias", {inter});
  l.down_bias = w.load_if(c.mlp_bias, p + "mlp.down_proj.bias", {hidden});
  return l;
}

void add_layer(std::vector<NamedTensor>& out, const LayerWeights& l, int64_t layer) {
  const std::string p = fmt::format("model.layers.{}.", layer);
  const std::vector<NamedTensor> all = {
      {p + "input_layernorm.weight", l.input_norm},   {p + "self_attn.q_proj.weight", l.q_proj},
      {p + "self_attn.k_proj.weight", l.k_proj},      {p + "self_attn.v_proj.weight", l.v_proj},
      {p + "self_attn.o_proj.weight", l.o_proj},      {p + "self_attn.q_proj.bias", l.q_bias},
      {p + "self_attn.k_proj.bias", l.k_bias},        {p + "self_attn.v_proj.bias", l.v_bias},
      {p + "self_attn.o_proj.bias", l.o_bias},        {p + "self_attn.q_norm.weight", l.q_norm},
      {p + "self_attn.k_norm.weight", l.k_norm},      {p + "self_attn.k_smear", l.k_smear},
      {p + "post_attention_layernorm.weight", l.post_attention_norm},
      {p + "mlp.gate_proj.weight", l.gate_proj},      {p + "mlp.up_proj.weight", l.up_proj},
      {p + "mlp.down_proj.weight", l.down_proj},      {p + "mlp.gate_proj.bias", l.gate_bias},
      {p + "mlp.up_proj.bias", l.up_bias},            {p + "mlp.down_proj.bias", l.down_bias}};
  for (const auto& named : all)
    if (named.second.defined()) out.push_back(named);  // absent biases / q-k norms are undefined
}

}  // namespace

std::vector<NamedTensor> named_weights(const ModelConfig& config, const ModelWeights& weights) {
  std::vector<NamedTensor> out = {{"model.embed_tokens.weight", weights.embed_tokens}};
  for (int64_t layer = 0; layer < config.num_layers; ++layer) add_layer(out, weights.layers[layer], layer);
  out.emplace_back("model.norm.weight", weights.final_norm);
  if (!weights.lm_head.is_same(weights.embed_tokens)) out.emplace_back("lm_head.weight", weights.lm_head);
  return out;
}

ModelWeights load_weights(const std::filesystem::path& model, const ModelConfig& c, at::Device device,
                          at::ScalarType dtype) {
  WeightLoader w(model, c, device, dtype);
  const std::vector<int64_t> table_shape = {c.vocab_size, c.hidden_size};
  const bool has_embed = w.has("model.embed_tokens.weight"), has_head = w.has("lm_head.weight");
  ModelWeights m;
  // Tied checkpoints store one table: HF drops lm_head.weight, some exporters keep only lm_head.weight
  // (tinystories-656k's header maps the embedding to it).
  if (has_embed)
    m.embed_tokens = w.load("model.embed_tokens.weight", table_shape);
  else if (has_head && c.tie_word_embeddings)
    m.embed_tokens = w.load("lm_head.weight", table_shape);
  else
    m.embed_tokens = w.load("model.embed_tokens.weight", table_shape);  // reports the missing tensor
  // Absent lm_head.weight means tied (how HF saves tied models).
  m.lm_head = has_head && has_embed ? w.load("lm_head.weight", table_shape) : m.embed_tokens;
  m.final_norm = w.load("model.norm.weight", {c.hidden_size});
  for (int64_t layer = 0; layer < c.num_layers; ++layer) m.layers.push_back(load_layer(w, c, layer));
  return m;
}

}  // namespace kvbench
