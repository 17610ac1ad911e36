#include "model/checkpoint_writer.h"

#include <fstream>

#include "common/error.h"

namespace kvbench {

namespace {

std::string safetensors_dtype(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: return "F32";
    case at::kBFloat16: return "BF16";
    case at::kHalf: return "F16";
    case at::kDouble: return "F64";
    default: fail("safetensors writer: unsupported dtype {}", c10::toString(dtype));
  }
}

}  // namespace

void write_safetensors(const std::filesystem::path& file, const std::vector<NamedTensor>& tensors,
                       at::ScalarType dtype, const std::map<std::string, std::string>& metadata) {
  const std::string dtype_text = safetensors_dtype(dtype);
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<at::Tensor> data;
  size_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (header.contains(name)) fail("{}: tensor \"{}\" listed twice", file.string(), name);
    data.push_back(tensor.detach().to(at::kCPU, dtype).contiguous());
    const size_t bytes = data.back().numel() * data.back().element_size();
    header[name] = {{"dtype", dtype_text}, {"shape", tensor.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');  // the format pads the header with spaces
  const uint64_t header_length = header_text.size();           // little-endian on every platform we build for
  std::string bytes(reinterpret_cast<const char*>(&header_length), 8);
  bytes += header_text;
  for (const auto& t : data) bytes.append(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
  write_file_atomically(file, bytes);
}

json model_config_json(const ModelConfig& c, at::ScalarType dtype) {
  static const std::map<ModelFamily, std::string> architectures = {{ModelFamily::Llama, "LlamaForCausalLM"},
                                                                   {ModelFamily::Qwen2, "Qwen2ForCausalLM"},
                                                                   {ModelFamily::Qwen3, "Qwen3ForCausalLM"}};
  json j = {{"architectures", {architectures.at(c.family)}},
            {"model_type", to_string(c.family)},
            {"hidden_size", c.hidden_size},
            {"intermediate_size", c.intermediate_size},
            {"num_hidden_layers", c.num_layers},
            {"num_attention_heads", c.num_heads},
            {"num_key_value_heads", c.num_kv_heads},
            {"head_dim", c.head_dim},
            {"vocab_size", c.vocab_size},
            {"max_position_embeddings", c.max_position_embeddings},
            {"rms_norm_eps", c.rms_norm_eps},
            {"rope_theta", c.rope_theta},
            {"tie_word_embeddings", c.tie_word_embeddings},
            {"hidden_act", "silu"},
            {"torch_dtype", dtype_name(dtype)}};
  if (c.family != ModelFamily::Qwen2) j["attention_bias"] = c.qkv_bias;
  if (c.family == ModelFamily::Llama) j["mlp_bias"] = c.mlp_bias;
  if (c.key_smear) j["key_smear"] = true;  // only kvbench's demo model has it; other configs stay HF's
  if (c.rope_scaling)
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", c.rope_scaling->factor},
                         {"low_freq_factor", c.rope_scaling->low_freq_factor},
                         {"high_freq_factor", c.rope_scaling->high_freq_factor},
                         {"original_max_position_embeddings", c.rope_scaling->original_max_position_embeddings}};
  return j;
}

void save_model(const std::filesystem::path& dir, const ModelConfig& config, const ModelWeights& weights,
                at::ScalarType dtype, const SpecialTokenIds& special) {
  std::filesystem::create_directories(dir);
  json config_json = model_config_json(config, dtype);
  json generation = json::object();
  if (special.bos) config_json["bos_token_id"] = generation["bos_token_id"] = *special.bos;
  if (special.eos) config_json["eos_token_id"] = generation["eos_token_id"] = *special.eos;
  write_safetensors(dir / "model.safetensors", named_weights(config, weights), dtype, {{"format", "pt"}});
  write_json_file(dir / "config.json", config_json);
  if (!generation.empty()) write_json_file(dir / "generation_config.json", generation);
}

}  // namespace kvbench
