// config.json (or GGUF metadata) → ModelConfig for the decoder families kvbench runs: llama (incl. llama3
// rope scaling), qwen2 (q/k/v biases) and qwen3 (per-head q/k RMSNorm, explicit head_dim).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "cache/cache_shape.h"

namespace kvbench {

enum class ModelFamily { Llama, Qwen2, Qwen3 };

struct Llama3RopeScaling {
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

struct ModelConfig {
  ModelFamily family = ModelFamily::Llama;
  std::string model_type;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  std::optional<Llama3RopeScaling> rope_scaling;
  bool qkv_bias = false;  // Qwen2 always; Llama when attention_bias
  bool o_bias = false;    // Llama attention_bias also biases o_proj
  bool mlp_bias = false;
  bool qk_norm = false;   // Qwen3
  bool tie_word_embeddings = false;
  // Not HF: kvbench's demo model mixes the previous token's key into layer 0's keys (Model::smear_keys).
  bool key_smear = false;

  int64_t group_size() const { return num_heads / num_kv_heads; }  // query heads per KV head
};

inline CacheShape cache_shape(const ModelConfig& c) { return {c.num_layers, c.num_kv_heads, c.head_dim, c.hidden_size}; }

// Reads MODEL/config.json, or the metadata of MODEL's GGUF file (a .gguf, or a directory holding one and no
// config.json: model/gguf_weights.h); throws kvbench::Error naming the file and field on anything missing or
// unsupported.
ModelConfig load_model_config(const std::filesystem::path& model);

// The checks every config passes (positive sizes, heads a multiple of KV heads, even head_dim); errors name `file`.
void validate_model_config(const ModelConfig& config, const std::filesystem::path& file);

std::string to_string(ModelFamily family);

}  // namespace kvbench
