// A GGUF file (llama.cpp's format) as a kvbench model: the ModelConfig its metadata describes, and its
// tensors under HF's names, dequantized to float32 (model/gguf_dequantize.h) and, for Llama, with the row
// order of q/k restored (llama.cpp's converter interleaves each head's two RoPE halves). What transformers'
// GGUF loader (modeling_gguf_pytorch_utils) makes of the same file, bit for bit.
#pragma once
#include <filesystem>
#include <string>

#include "common/gguf_file.h"
#include "model/gguf_config.h"
#include "model/tensor_source.h"

namespace kvbench {

// llama.cpp's name of a HF tensor name ("model.layers.3.mlp.up_proj.weight" → "blk.3.ffn_up.weight");
// empty for tensors GGUF has no name for.
std::string gguf_tensor_name(const std::string& hf_name);

class GgufSource : public TensorSource {
 public:
  GgufSource(const std::filesystem::path& file, const ModelConfig& config) : file_(file), config_(config) {}
  bool contains(const std::string& name) const override;
  std::vector<int64_t> shape(const std::string& name) const override;
  at::Tensor read(const std::string& name) const override;  // float32, owning
  std::string where(const std::string& name) const override;
  std::string config_origin() const override { return "the GGUF metadata"; }

 private:
  const GgufTensor& tensor(const std::string& name) const;

  GgufFile file_;
  ModelConfig config_;
};

}  // namespace kvbench
