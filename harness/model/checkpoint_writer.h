// Writing checkpoints the loader (model/safetensors.h, Model::load) and HF transformers read:
// safetensors files and a model directory with config.json (+ generation_config.json).
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json_file.h"
#include "model/weights.h"

namespace kvbench {

// One safetensors file with every tensor converted to `dtype` (F32, BF16, F16 or F64). Written to a
// temporary file and renamed into place, so a failure never leaves a half-written file behind.
void write_safetensors(const std::filesystem::path& file, const std::vector<NamedTensor>& tensors,
                       at::ScalarType dtype, const std::map<std::string, std::string>& metadata = {});

// config.json fields of `config` (the inverse of load_model_config).
json model_config_json(const ModelConfig& config, at::ScalarType dtype);

struct SpecialTokenIds {
  std::optional<int64_t> bos, eos;  // written to config.json and generation_config.json when set
};

// DIR/config.json + DIR/model.safetensors (+ generation_config.json); DIR is created if needed.
void save_model(const std::filesystem::path& dir, const ModelConfig& config, const ModelWeights& weights,
                at::ScalarType dtype, const SpecialTokenIds& special = {});

}  // namespace kvbench
