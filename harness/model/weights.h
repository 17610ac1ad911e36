#pragma once
#include <filesystem>

#include "model/model.h"

namespace kvbench {

// Loads and shape-checks every tensor the config implies; errors name the file and tensor.
ModelWeights load_weights(const std::filesystem::path& dir, const ModelConfig& config, at::Device device,
                          at::ScalarType dtype);

}  // namespace kvbench
