#include "model/gguf_weights.h"

#include <fmt/format.h>

#include <map>

#include "common/error.h"
#include "model/gguf_dequantize.h"

namespace kvbench {

namespace {

ModelFamily gguf_family(const GgufFile& f) {
  const std::string arch = f.string("general.architecture");
  if (arch == "llama") return ModelFamily::Llama;
  if (arch == "qwen2") return ModelFamily::Qwen2;
  if (arch == "qwen3") return ModelFamily::Qwen3;
  f.fail_at("general.architecture", fmt::format("\"{}\" is not supported (kvbench runs llama, qwen2, qwen3)", arch));
}

std::int64_t positive(const GgufFile& f, const std::string& key) {
  const std::int64_t value = f.integer(key);
  if (value <= 0) f.fail_at(key, fmt::format("must be positive (got {})", value));
  return value;
}

std::int64_t positive_or(const GgufFile& f, const std::string& key, std::int64_t fallback) {
  return f.has(key) ? positive(f, key) : fallback;
}

std::int64_t vocabulary_size(const GgufFile& f, const std::string& arch) {
  const std::string key = arch + ".vocab_size", tokens = "tokenizer.ggml.tokens";
  if (f.has(key)) return positive(f, key);
  if (f.has(tokens) && f.metadata().at(tokens).is_array())
    return static_cast<std::int64_t>(f.metadata().at(tokens).size());
  f.fail_at(key, "missing, and no tokenizer.ggml.tokens to count");
}

// kvbench runs plain RoPE over the whole head for GGUF models: scaled RoPE (a scaling type, or Llama 3.1's
// frequency factors, which llama.cpp stores as the tensor rope_freqs.weight) and partial rotation are refused.
void require_plain_rope(const GgufFile& f, const std::string& arch, std::int64_t head_dim) {
  const std::string scaling = arch + ".rope.scaling.type";
  if (f.has(scaling) && f.string(scaling) != "none")
    f.fail_at(scaling, fmt::format("\"{}\": RoPE scaling is not supported for GGUF models", f.string(scaling)));
  if (f.tensors().count("rope_freqs.weight"))
    fail("{}: tensor \"rope_freqs.weight\": RoPE frequency factors (Llama 3.1-style scaling) are not supported",
         f.path().string());
  const std::string rotated = arch + ".rope.dimension_count";
  if (f.has(rotated) && f.integer(rotated) != head_dim)
    f.fail_at(rotated, fmt::format("{} (RoPE over part of the head) differs from head_dim {}; not supported",
                                   f.integer(rotated), head_dim));
}

const std::map<std::string, std::string>& global_names() {
  static const std::map<std::string, std::string> names = {{"model.embed_tokens.weight", "token_embd.weight"},
                                                           {"model.norm.weight", "output_norm.weight"},
                                                           {"lm_head.weight", "output.weight"}};
  return names;
}

// Per layer: HF's name after "model.layers.N." → llama.cpp's after "blk.N.".
const std::map<std::string, std::string>& layer_names() {
  static const std::map<std::string, std::string> names = {
      {"input_layernorm.weight", "attn_norm.weight"}, {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},   {"self_attn.q_proj.bias", "attn_q.bias"},
      {"self_attn.k_proj.weight", "attn_k.weight"},   {"self_attn.k_proj.bias", "attn_k.bias"},
      {"self_attn.v_proj.weight", "attn_v.weight"},   {"self_attn.v_proj.bias", "attn_v.bias"},
      {"self_attn.o_proj.weight", "attn_output.weight"}, {"self_attn.o_proj.bias", "attn_output.bias"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"}, {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},    {"mlp.gate_proj.bias", "ffn_gate.bias"},
      {"mlp.up_proj.weight", "ffn_up.weight"},        {"mlp.up_proj.bias", "ffn_up.bias"},
      {"mlp.down_proj.weight", "ffn_down.weight"},    {"mlp.down_proj.bias", "ffn_down.bias"}};
  return names;
}

// llama.cpp's converter (convert_hf_to_gguf.py, LlamaModel.permute) stores each head's q/k rows with the two
// RoPE halves interleaved: its row 2i is HF's row i, its row 2i + 1 HF's row i + D/2. This restores HF's
// order (transformers' LlamaTensorProcessor._reverse_permute_weights), for weights [rows, in] and biases alike.
at::Tensor unpermute_heads(const at::Tensor& stored, std::int64_t heads) {
  std::vector<std::int64_t> split = {heads, stored.size(0) / heads / 2, 2};
  split.insert(split.end(), stored.sizes().begin() + 1, stored.sizes().end());
  return stored.reshape(split).transpose(1, 2).reshape(stored.sizes()).contiguous();
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

ModelConfig gguf_model_config(const GgufFile& f) {
  ModelConfig c;
  c.family = gguf_family(f);
  c.model_type = to_string(c.family);
  const std::string a = c.model_type + ".";
  if (f.has(a + "expert_count") && f.integer(a + "expert_count") > 0)
    f.fail_at(a + "expert_count", "mixture-of-experts models are not supported");
  c.num_layers = positive(f, a + "block_count");
  c.hidden_size = positive(f, a + "embedding_length");
  c.intermediate_size = positive(f, a + "feed_forward_length");
  c.num_heads = positive(f, a + "attention.head_count");
  c.num_kv_heads = positive_or(f, a + "attention.head_count_kv", c.num_heads);
  c.head_dim = positive_or(f, a + "attention.key_length",
                           positive_or(f, a + "rope.dimension_count", c.hidden_size / c.num_heads));
  c.vocab_size = vocabulary_size(f, c.model_type);
  c.max_position_embeddings = f.has(a + "context_length") ? f.integer(a + "context_length") : 0;
  c.rms_norm_eps = f.number(a + "attention.layer_norm_rms_epsilon");
  c.rope_theta = f.has(a + "rope.freq_base") ? f.number(a + "rope.freq_base") : 10000.0;
  require_plain_rope(f, c.model_type, c.head_dim);
  c.tie_word_embeddings = f.tensors().count("output.weight") == 0;
  const auto has_tensor = [&](const std::string& name) { return f.tensors().count(name) > 0; };
  switch (c.family) {
    case ModelFamily::Llama:  // HF's attention_bias gives q, k, v and o biases together
      c.qkv_bias = c.o_bias = has_tensor("blk.0.attn_q.bias");
      c.mlp_bias = has_tensor("blk.0.ffn_gate.bias");
      break;
    case ModelFamily::Qwen2:  // q/k/v biases always, none on o_proj (as HF's Qwen2Attention)
      c.qkv_bias = true;
      break;
    case ModelFamily::Qwen3:
      c.qkv_bias = c.o_bias = has_tensor("blk.0.attn_q.bias");
      c.qk_norm = true;
      break;
  }
  validate_model_config(c, f.path());
  return c;
}

std::string gguf_tensor_name(const std::string& hf_name) {
  if (const auto it = global_names().find(hf_name); it != global_names().end()) return it->second;
  const std::string prefix = "model.layers.";
  if (hf_name.rfind(prefix, 0) != 0) return {};
  const std::size_t dot = hf_name.find('.', prefix.size());
  if (dot == std::string::npos) return {};
  const auto it = layer_names().find(hf_name.substr(dot + 1));
  if (it == layer_names().end()) return {};
  return "blk." + hf_name.substr(prefix.size(), dot - prefix.size()) + "." + it->second;
}

const GgufTensor& GgufSource::tensor(const std::string& name) const {
  const std::string gguf_name = gguf_tensor_name(name);
  if (gguf_name.empty()) fail("{}: kvbench's tensor \"{}\" has no GGUF counterpart", file_.path().string(), name);
  return file_.tensor(gguf_name);  // throws `FILE: missing tensor "blk.N.…"`
}

bool GgufSource::contains(const std::string& name) const {
  const std::string gguf_name = gguf_tensor_name(name);
  return !gguf_name.empty() && file_.tensors().count(gguf_name) > 0;
}

std::vector<int64_t> GgufSource::shape(const std::string& name) const { return torch_shape(tensor(name)); }

at::Tensor GgufSource::read(const std::string& name) const {
  const GgufTensor& t = tensor(name);
  at::Tensor values = dequantize(t, file_.path());
  if (config_.family != ModelFamily::Llama) return values;  // llama.cpp permutes Llama's q/k alone
  const bool q = ends_with(name, "q_proj.weight") || ends_with(name, "q_proj.bias");
  const bool k = ends_with(name, "k_proj.weight") || ends_with(name, "k_proj.bias");
  if (!q && !k) return values;
  const std::int64_t heads = q ? config_.num_heads : config_.num_kv_heads;
  if (values.size(0) != heads * config_.head_dim) return values;  // the loader's shape check reports it
  return unpermute_heads(values, heads);
}

std::string GgufSource::where(const std::string& name) const {
  return fmt::format("{}: tensor \"{}\"", file_.path().string(), gguf_tensor_name(name));
}

}  // namespace kvbench
