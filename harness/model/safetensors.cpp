#include "model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "common/error.h"
#include "common/json_file.h"

namespace kvbench {

namespace {

at::ScalarType scalar_type(const std::string& dtype) {
  static const std::map<std::string, at::ScalarType> table = {
      {"F32", at::kFloat}, {"BF16", at::kBFloat16}, {"F16", at::kHalf}, {"F64", at::kDouble}, {"I64", at::kLong},
      {"I32", at::kInt},   {"I8", at::kChar},       {"U8", at::kByte},  {"BOOL", at::kBool}};
  return table.at(dtype);  // the header parser admitted only these names
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : path_(path) {
  const std::string file = path.string();
  int fd = ::open(file.c_str(), O_RDONLY);
  if (fd < 0) fail("{}: cannot open ({})", file, std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  size_ = static_cast<size_t>(st.st_size);
  if (size_ < 8) {  // mmap of an empty file fails; the parser names the problem
    ::close(fd);
    parse_safetensors_header(nullptr, size_, file);
  }
  void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) fail("{}: mmap failed ({})", file, std::strerror(errno));
  data_ = static_cast<const uint8_t*>(mapped);

  SafetensorsHeader header;
  try {
    header = parse_safetensors_header(data_, size_, file);
  } catch (...) {
    ::munmap(mapped, size_);  // the destructor does not run for a constructor that throws
    throw;
  }
  data_start_ = header.data_start;
  tensors_ = std::move(header.tensors);
  metadata_ = std::move(header.metadata);
}

SafetensorsFile::~SafetensorsFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

at::Tensor SafetensorsFile::view(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) fail("{}: no tensor \"{}\"", path_.string(), name);
  const TensorInfo& info = it->second;
  return at::from_blob(const_cast<uint8_t*>(data_ + data_start_ + info.begin), info.shape,
                       at::TensorOptions().dtype(scalar_type(info.dtype)));
}

Checkpoint::Checkpoint(const std::filesystem::path& model_dir) {
  const auto single = model_dir / "model.safetensors";
  const auto index = model_dir / "model.safetensors.index.json";
  std::vector<std::filesystem::path> shard_paths;
  if (std::filesystem::exists(index)) {
    const json j = read_json_file(index);
    const json& weight_map = require_field(j, "weight_map", index);
    std::map<std::string, std::string> unique;
    for (const auto& [tensor, shard] : weight_map.items()) {
      if (!shard.is_string()) fail("{}: weight_map[\"{}\"] is not a file name", index.string(), tensor);
      unique[shard.get<std::string>()] = tensor;
    }
    for (const auto& [shard, tensor] : unique) shard_paths.push_back(model_dir / shard);
  } else if (std::filesystem::exists(single)) {
    shard_paths.push_back(single);
  } else {
    fail("{}: no model.safetensors or model.safetensors.index.json", model_dir.string());
  }
  for (const auto& p : shard_paths) {
    files_.push_back(std::make_unique<SafetensorsFile>(p));
    for (const auto& [name, info] : files_.back()->tensors()) where_[name] = files_.back().get();
  }
}

const SafetensorsFile& Checkpoint::file_of(const std::string& name) const {
  auto it = where_.find(name);
  if (it == where_.end()) fail("{}: missing tensor \"{}\"", describe_files(), name);
  return *it->second;
}

const TensorInfo& Checkpoint::info(const std::string& name) const { return file_of(name).tensors().at(name); }

at::Tensor Checkpoint::view(const std::string& name) const {
  return file_of(name).view(name);
}

std::string Checkpoint::describe_files() const {
  std::string out;
  for (const auto& f : files_) out += (out.empty() ? "" : ", ") + f->path().string();
  return out;
}

}  // namespace kvbench
