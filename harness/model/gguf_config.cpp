#include "model/gguf_config.h"

#include <fmt/format.h>

#include "common/error.h"

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

}  // namespace kvbench
