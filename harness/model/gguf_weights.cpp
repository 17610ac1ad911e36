#include "model/gguf_weights.h"

#include <fmt/format.h>

#include <map>

#include "common/error.h"
#include "model/gguf_dequantize.h"

namespace kvbench {

namespace {

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
