// Where a model's tensors come from, named as HF names them ("model.layers.0.self_attn.q_proj.weight"):
// a safetensors checkpoint (a directory, one file or shards) or a GGUF file (model/gguf_weights.h). The
// weight loader (model/weights.cpp) reads both through this one interface.
#pragma once
#include <ATen/ATen.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/safetensors.h"

namespace kvbench {

class TensorSource {
 public:
  virtual ~TensorSource() = default;
  virtual bool contains(const std::string& name) const = 0;
  // The tensor's shape as the model uses it ([out, in] for a projection); throws naming the file when missing.
  virtual std::vector<int64_t> shape(const std::string& name) const = 0;
  // Its values on the CPU in a floating dtype; may alias the source's mapping: copy it before the source closes.
  virtual at::Tensor read(const std::string& name) const = 0;
  // `FILE: tensor "NAME"` as the file names it, for errors.
  virtual std::string where(const std::string& name) const = 0;
  // Where the shapes the loader expects come from ("config.json", "the GGUF metadata"), for errors.
  virtual std::string config_origin() const = 0;
};

class SafetensorsSource : public TensorSource {
 public:
  explicit SafetensorsSource(const std::filesystem::path& model_dir) : checkpoint_(model_dir) {}
  bool contains(const std::string& name) const override { return checkpoint_.contains(name); }
  std::vector<int64_t> shape(const std::string& name) const override { return checkpoint_.info(name).shape; }
  at::Tensor read(const std::string& name) const override { return checkpoint_.view(name); }
  std::string where(const std::string& name) const override;
  std::string config_origin() const override { return "config.json"; }

 private:
  Checkpoint checkpoint_;
};

// The model at `model`: its GGUF file (a .gguf, or a directory holding one and no config.json), else its
// safetensors checkpoint. `config` is the model's (load_model_config of the same path).
std::unique_ptr<TensorSource> open_tensor_source(const std::filesystem::path& model, const ModelConfig& config);

}  // namespace kvbench
