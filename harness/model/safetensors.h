// Safetensors checkpoints: one file or shards listed in model.safetensors.index.json, memory-mapped,
// validated up front (header bounds, dtypes, offsets) so a bad file fails with its name, not a crash.
#pragma once
#include <ATen/ATen.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/safetensors_header.h"

namespace kvbench {

class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::filesystem::path& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The tensor as stored, aliasing the read-only mapping: copy it (never write) before the file closes.
  at::Tensor view(const std::string& name) const;

 private:
  std::filesystem::path path_;
  const uint8_t* data_ = nullptr;  // whole mapped file
  size_t size_ = 0;
  size_t data_start_ = 0;
  std::map<std::string, TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of a model directory, whether in one file or sharded.
class Checkpoint {
 public:
  explicit Checkpoint(const std::filesystem::path& model_dir);
  bool contains(const std::string& name) const { return where_.count(name) > 0; }
  const TensorInfo& info(const std::string& name) const;
  const SafetensorsFile& file_of(const std::string& name) const;
  at::Tensor view(const std::string& name) const;  // as SafetensorsFile::view
  std::string describe_files() const;  // for error messages

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const SafetensorsFile*> where_;
};

}  // namespace kvbench
