#include "model/tensor_source.h"

#include <fmt/format.h>

#include "common/gguf_file.h"
#include "model/gguf_weights.h"

namespace kvbench {

std::string SafetensorsSource::where(const std::string& name) const {
  return fmt::format("{}: tensor \"{}\"", checkpoint_.file_of(name).path().string(), name);
}

std::unique_ptr<TensorSource> open_tensor_source(const std::filesystem::path& model, const ModelConfig& config) {
  if (const auto gguf = gguf_model_file(model); !gguf.empty()) return std::make_unique<GgufSource>(gguf, config);
  return std::make_unique<SafetensorsSource>(model);
}

}  // namespace kvbench
