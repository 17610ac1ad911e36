// Random-weight models of real shapes, for benchmarks where no checkpoint is at hand
// (e.g. `--model random:qwen2.5-0.5b`).
#pragma once
#include <string>

#include "model/model.h"

namespace kvbench {

// Presets: qwen2.5-0.5b, qwen2.5-7b, llama-3.1-8b, qwen3-8b.
ModelConfig random_model_config(const std::string& preset);
Model random_model(const ModelConfig& config, uint64_t seed, at::Device device, at::ScalarType dtype);

}  // namespace kvbench
