#include "model/config.h"

#include "common/error.h"
#include "common/gguf_file.h"
#include "common/json_file.h"
#include "model/gguf_config.h"

namespace kvbench {

namespace {

template <class T>
T field(const json& j, const std::string& name, const std::filesystem::path& file) {
  const json& value = require_field(j, name, file);
  try {
    return value.get<T>();
  } catch (const json::exception&) {
    fail("{}: field \"{}\" has the wrong type ({})", file.string(), name, value.dump());
  }
}

template <class T>
T field_or(const json& j, const std::string& name, T fallback, const std::filesystem::path& file) {
  if (!j.contains(name) || j.at(name).is_null()) return fallback;
  return field<T>(j, name, file);
}

ModelFamily parse_family(const std::string& model_type, const std::filesystem::path& file) {
  if (model_type == "llama") return ModelFamily::Llama;
  if (model_type == "qwen2") return ModelFamily::Qwen2;
  if (model_type == "qwen3") return ModelFamily::Qwen3;
  fail("{}: field \"model_type\" is \"{}\"; supported: llama, qwen2, qwen3", file.string(), model_type);
}

// transformers 5 writes RoPE as one object, "rope_parameters" {rope_type, rope_theta, and the scaling's
// fields}, with neither "rope_theta" nor "rope_scaling" at the top level; earlier versions write those two.
const json* rope_parameters(const json& j) {
  if (j.contains("rope_parameters") && j.at("rope_parameters").is_object()) return &j.at("rope_parameters");
  return nullptr;
}

std::optional<Llama3RopeScaling> parse_rope_scaling(const json& j, const std::filesystem::path& file) {
  const char* key = "rope_scaling";
  if (!j.contains(key) || j.at(key).is_null()) {
    if (!rope_parameters(j)) return std::nullopt;
    key = "rope_parameters";
  }
  const json& s = j.at(key);
  // HF renamed "type" to "rope_type"; checkpoints carry either.
  std::string type = s.contains("rope_type") ? field<std::string>(s, "rope_type", file)
                                             : field<std::string>(s, "type", file);
  if (type == "default") return std::nullopt;
  if (type != "llama3") fail("{}: field \"{}.rope_type\" is \"{}\"; supported: llama3", file.string(), key, type);
  Llama3RopeScaling r;
  r.factor = field<double>(s, "factor", file);
  r.low_freq_factor = field<double>(s, "low_freq_factor", file);
  r.high_freq_factor = field<double>(s, "high_freq_factor", file);
  r.original_max_position_embeddings = field<int64_t>(s, "original_max_position_embeddings", file);
  return r;
}

}  // namespace

void validate_model_config(const ModelConfig& c, const std::filesystem::path& file) {
  auto positive = [&](int64_t v, const char* name) {
    if (v <= 0) fail("{}: field \"{}\" must be positive (got {})", file.string(), name, v);
  };
  positive(c.hidden_size, "hidden_size");
  positive(c.intermediate_size, "intermediate_size");
  positive(c.num_layers, "num_hidden_layers");
  positive(c.num_heads, "num_attention_heads");
  positive(c.num_kv_heads, "num_key_value_heads");
  positive(c.head_dim, "head_dim");
  positive(c.vocab_size, "vocab_size");
  if (c.num_heads % c.num_kv_heads != 0)
    fail("{}: num_attention_heads ({}) is not a multiple of num_key_value_heads ({})", file.string(), c.num_heads,
         c.num_kv_heads);
  if (c.head_dim % 2 != 0) fail("{}: head_dim ({}) must be even for RoPE", file.string(), c.head_dim);
}

ModelConfig load_model_config(const std::filesystem::path& model) {
  if (const auto gguf = gguf_model_file(model); !gguf.empty()) return gguf_model_config(GgufFile(gguf));
  const auto file = model / "config.json";
  if (!std::filesystem::exists(file)) fail("{}: missing (not a HF model directory?)", file.string());
  const json j = read_json_file(file);
  ModelConfig c;
  c.model_type = field<std::string>(j, "model_type", file);
  c.family = parse_family(c.model_type, file);
  c.hidden_size = field<int64_t>(j, "hidden_size", file);
  c.intermediate_size = field<int64_t>(j, "intermediate_size", file);
  c.num_layers = field<int64_t>(j, "num_hidden_layers", file);
  c.num_heads = field<int64_t>(j, "num_attention_heads", file);
  c.num_kv_heads = field_or<int64_t>(j, "num_key_value_heads", c.num_heads, file);
  c.vocab_size = field<int64_t>(j, "vocab_size", file);
  c.max_position_embeddings = field_or<int64_t>(j, "max_position_embeddings", 0, file);
  if (c.num_heads <= 0) fail("{}: field \"num_attention_heads\" must be positive", file.string());
  c.head_dim = field_or<int64_t>(j, "head_dim", c.hidden_size / c.num_heads, file);
  c.rms_norm_eps = field_or<double>(j, "rms_norm_eps", 1e-6, file);
  c.rope_theta = field_or<double>(j, "rope_theta", 10000.0, file);
  if (!j.contains("rope_theta") || j.at("rope_theta").is_null())
    if (const json* rope = rope_parameters(j)) c.rope_theta = field_or<double>(*rope, "rope_theta", 10000.0, file);
  c.rope_scaling = parse_rope_scaling(j, file);
  c.tie_word_embeddings = field_or<bool>(j, "tie_word_embeddings", false, file);
  c.key_smear = field_or<bool>(j, "key_smear", false, file);
  const std::string act = field_or<std::string>(j, "hidden_act", "silu", file);
  if (act != "silu") fail("{}: field \"hidden_act\" is \"{}\"; supported: silu", file.string(), act);
  switch (c.family) {
    case ModelFamily::Llama:
      c.qkv_bias = c.o_bias = field_or<bool>(j, "attention_bias", false, file);
      c.mlp_bias = field_or<bool>(j, "mlp_bias", false, file);
      break;
    case ModelFamily::Qwen2:  // HF Qwen2Attention hard-codes bias=True on q/k/v, False on o_proj
      c.qkv_bias = true;
      break;
    case ModelFamily::Qwen3:
      c.qkv_bias = c.o_bias = field_or<bool>(j, "attention_bias", false, file);
      c.qk_norm = true;
      break;
  }
  validate_model_config(c, file);
  return c;
}

std::string to_string(ModelFamily family) {
  switch (family) {
    case ModelFamily::Llama: return "llama";
    case ModelFamily::Qwen2: return "qwen2";
    case ModelFamily::Qwen3: return "qwen3";
  }
  return "?";
}

}  // namespace kvbench
