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

struct DtypeSpec {
  at::ScalarType type;
  size_t bytes;
};

const std::map<std::string, DtypeSpec>& known_dtypes() {
  static const std::map<std::string, DtypeSpec> table = {
      {"F32", {at::kFloat, 4}}, {"BF16", {at::kBFloat16, 2}}, {"F16", {at::kHalf, 2}},
      {"F64", {at::kDouble, 8}}, {"I64", {at::kLong, 8}},     {"I32", {at::kInt, 4}},
      {"I8", {at::kChar, 1}},   {"U8", {at::kByte, 1}},       {"BOOL", {at::kBool, 1}}};
  return table;
}

TensorInfo parse_tensor_entry(const std::string& name, const json& entry, const std::string& file) {
  TensorInfo info;
  try {
    info.dtype = entry.at("dtype").get<std::string>();
    info.shape = entry.at("shape").get<std::vector<int64_t>>();
    auto offsets = entry.at("data_offsets").get<std::vector<size_t>>();
    if (offsets.size() != 2) fail("{}: tensor \"{}\": data_offsets must have 2 entries", file, name);
    info.begin = offsets[0];
    info.end = offsets[1];
  } catch (const json::exception& e) {
    fail("{}: tensor \"{}\": malformed header entry ({})", file, name, e.what());
  }
  auto dtype = known_dtypes().find(info.dtype);
  if (dtype == known_dtypes().end()) fail("{}: tensor \"{}\": unknown dtype \"{}\"", file, name, info.dtype);
  size_t numel = 1;
  for (int64_t d : info.shape) {
    if (d < 0) fail("{}: tensor \"{}\": negative dimension in shape", file, name);
    numel *= static_cast<size_t>(d);
  }
  if (info.end < info.begin || info.end - info.begin != numel * dtype->second.bytes)
    fail("{}: tensor \"{}\": data_offsets [{}, {}) do not match shape and dtype {} ({} bytes expected)", file, name,
         info.begin, info.end, info.dtype, numel * dtype->second.bytes);
  return info;
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : path_(path) {
  const std::string file = path.string();
  int fd = ::open(file.c_str(), O_RDONLY);
  if (fd < 0) fail("{}: cannot open ({})", file, std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  size_ = static_cast<size_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    fail("{}: truncated safetensors file ({} bytes, no header length)", file, size_);
  }
  void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) fail("{}: mmap failed ({})", file, std::strerror(errno));
  data_ = static_cast<const uint8_t*>(mapped);

  uint64_t header_len = 0;
  std::memcpy(&header_len, data_, 8);  // little-endian u64, as on every platform we build for
  if (header_len > size_ - 8)
    fail("{}: header length {} runs past the end of the file ({} bytes)", file, header_len, size_);
  data_start_ = 8 + header_len;
  json header;
  try {
    header = json::parse(data_ + 8, data_ + data_start_);
  } catch (const json::parse_error& e) {
    fail("{}: malformed JSON header: {}", file, e.what());
  }
  if (!header.is_object()) fail("{}: header is not a JSON object", file);
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : entry.items())
        if (v.is_string()) metadata_[k] = v.get<std::string>();
      continue;
    }
    TensorInfo info = parse_tensor_entry(name, entry, file);
    if (data_start_ + info.end > size_)
      fail("{}: tensor \"{}\" ends at byte {} but the file has only {} (truncated file?)", file, name,
           data_start_ + info.end, size_);
    tensors_.emplace(name, std::move(info));
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

at::Tensor SafetensorsFile::load(const std::string& name, at::Device device, at::ScalarType dtype) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) fail("{}: no tensor \"{}\"", path_.string(), name);
  const TensorInfo& info = it->second;
  const auto spec = known_dtypes().at(info.dtype);
  auto source = at::from_blob(const_cast<uint8_t*>(data_ + data_start_ + info.begin), info.shape,
                              at::TensorOptions().dtype(spec.type));
  // Converting dtype on CPU first keeps bf16→f32 exact and avoids a device round trip of the wider type.
  return source.to(at::kCPU, dtype, /*non_blocking=*/false, /*copy=*/true).to(device);
}

Checkpoint::Checkpoint(const std::filesystem::path& model_dir) {
  const auto single = model_dir / "model.safetensors";
  const auto index = model_dir / "model.safetensors.index.json";
  std::vector<std::filesystem::path> shard_paths;
  if (std::filesystem::exists(index)) {
    const json j = read_json_file(index);
    const json& weight_map = require_field(j, "weight_map", index);
    std::map<std::string, std::string> unique;
    for (const auto& [tensor, shard] : weight_map.items()) unique[shard.get<std::string>()] = tensor;
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

at::Tensor Checkpoint::load(const std::string& name, at::Device device, at::ScalarType dtype) const {
  return file_of(name).load(name, device, dtype);
}

std::string Checkpoint::describe_files() const {
  std::string out;
  for (const auto& f : files_) out += (out.empty() ? "" : ", ") + f->path().string();
  return out;
}

}  // namespace kvbench
