// The safetensors header (8-byte length, JSON table of tensors), parsed and validated without libtorch:
// every offset and size is checked with overflow-safe arithmetic against the file's length before a
// tensor is ever mapped, so a corrupted or hostile file is an error naming it, never an out-of-bounds read.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvbench {

struct TensorInfo {
  std::string dtype;            // "F32", "BF16", "F16", ...
  std::vector<int64_t> shape;
  size_t begin = 0, end = 0;    // byte offsets into the data section
};

struct SafetensorsHeader {
  size_t data_start = 0;  // first byte of the data section (8 + header length)
  std::map<std::string, TensorInfo> tensors;
  std::map<std::string, std::string> metadata;
};

// Bytes per element of a safetensors dtype name; 0 for names kvbench does not read.
size_t dtype_bytes(const std::string& dtype);

// `data` holds the whole file (`size` bytes); `file` names it in errors (kvbench::Error).
SafetensorsHeader parse_safetensors_header(const uint8_t* data, size_t size, const std::string& file);

}  // namespace kvbench
