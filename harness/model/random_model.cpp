#include "model/random_model.h"

#include <ATen/CPUGeneratorImpl.h>

#include <map>

#include "common/error.h"
#include "model/huge_pages.h"

namespace kvbench {

namespace {

ModelConfig preset(ModelFamily family, int64_t hidden, int64_t inter, int64_t layers, int64_t heads, int64_t kv,
                   int64_t vocab, double theta, bool tied) {
  ModelConfig c;
  c.family = family;
  c.model_type = to_string(family);
  c.hidden_size = hidden;
  c.intermediate_size = inter;
  c.num_layers = layers;
  c.num_heads = heads;
  c.num_kv_heads = kv;
  c.head_dim = family == ModelFamily::Qwen3 ? 128 : hidden / heads;
  c.vocab_size = vocab;
  c.max_position_embeddings = 32768;
  c.rope_theta = theta;
  c.tie_word_embeddings = tied;
  c.qkv_bias = family == ModelFamily::Qwen2;
  c.qk_norm = family == ModelFamily::Qwen3;
  return c;
}

}  // namespace

ModelConfig random_model_config(const std::string& name) {
  static const std::map<std::string, ModelConfig> presets = {
      {"qwen2.5-0.5b", preset(ModelFamily::Qwen2, 896, 4864, 24, 14, 2, 151936, 1e6, true)},
      {"qwen2.5-7b", preset(ModelFamily::Qwen2, 3584, 18944, 28, 28, 4, 152064, 1e6, false)},
      {"llama-3.1-8b", preset(ModelFamily::Llama, 4096, 14336, 32, 32, 8, 128256, 5e5, false)},
      {"qwen3-8b", preset(ModelFamily::Qwen3, 4096, 12288, 36, 32, 8, 151936, 1e6, false)},
  };
  auto it = presets.find(name);
  if (it == presets.end()) fail("unknown random model preset \"{}\" (known: qwen2.5-0.5b, qwen2.5-7b, llama-3.1-8b, qwen3-8b)", name);
  return it->second;
}

Model random_model(const ModelConfig& c, uint64_t seed, at::Device device, at::ScalarType dtype) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  HugePageArena arena;
  auto normal = [&](std::vector<int64_t> shape) {
    return arena.copy_of(at::normal(0.0, 0.02, shape, generator, at::TensorOptions().dtype(at::kFloat)), device, dtype);
  };
  auto ones = [&](int64_t n) { return at::ones({n}, at::TensorOptions().dtype(dtype).device(device)); };
  auto bias = [&](bool present, int64_t n) { return present ? normal({n}) : at::Tensor(); };
  const int64_t q_out = c.num_heads * c.head_dim, kv_out = c.num_kv_heads * c.head_dim;
  ModelWeights w;
  w.embed_tokens = normal({c.vocab_size, c.hidden_size});
  w.lm_head = c.tie_word_embeddings ? w.embed_tokens : normal({c.vocab_size, c.hidden_size});
  w.final_norm = ones(c.hidden_size);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    LayerWeights layer;
    layer.input_norm = ones(c.hidden_size);
    layer.post_attention_norm = ones(c.hidden_size);
    layer.q_proj = normal({q_out, c.hidden_size});
    layer.k_proj = normal({kv_out, c.hidden_size});
    layer.v_proj = normal({kv_out, c.hidden_size});
    layer.o_proj = normal({c.hidden_size, q_out});
    layer.q_bias = bias(c.qkv_bias, q_out);
    layer.k_bias = bias(c.qkv_bias, kv_out);
    layer.v_bias = bias(c.qkv_bias, kv_out);
    if (c.qk_norm) {
      layer.q_norm = ones(c.head_dim);
      layer.k_norm = ones(c.head_dim);
    }
    if (c.key_smear && l == 0) layer.k_smear = at::zeros({c.num_kv_heads}, at::TensorOptions().dtype(dtype).device(device));  // a = 1/2
    layer.gate_proj = normal({c.intermediate_size, c.hidden_size});
    layer.up_proj = normal({c.intermediate_size, c.hidden_size});
    layer.down_proj = normal({c.hidden_size, c.intermediate_size});
    w.layers.push_back(std::move(layer));
  }
  return Model::from_weights(c, std::move(w));
}

}  // namespace kvbench
