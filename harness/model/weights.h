#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"

namespace kvbench {

// Loads and shape-checks every tensor the config implies, from the model's safetensors or GGUF file
// (model/tensor_source.h); errors name the file and tensor.
ModelWeights load_weights(const std::filesystem::path& model, const ModelConfig& config, at::Device device,
                          at::ScalarType dtype);

using NamedTensor = std::pair<std::string, at::Tensor>;

// Every tensor of `weights` under its HF name, in a fixed order; a tied LM head is listed once (as
// model.embed_tokens.weight, the way HF saves tied models). The tensors alias the weights, so this
// list also serves as the parameter list for training.
std::vector<NamedTensor> named_weights(const ModelConfig& config, const ModelWeights& weights);

}  // namespace kvbench
