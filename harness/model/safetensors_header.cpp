#include "model/safetensors_header.h"

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace kvbench {

namespace {

using json = nlohmann::json;

// a * b, or nullopt-like false when it overflows size_t.
bool checked_multiply(size_t a, size_t b, size_t& product) {
  if (a != 0 && b > std::numeric_limits<size_t>::max() / a) return false;
  product = a * b;
  return true;
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
  const size_t element_bytes = dtype_bytes(info.dtype);
  if (element_bytes == 0) fail("{}: tensor \"{}\": unknown dtype \"{}\"", file, name, info.dtype);
  size_t bytes = element_bytes;
  for (int64_t d : info.shape) {
    if (d < 0) fail("{}: tensor \"{}\": negative dimension in shape", file, name);
    if (!checked_multiply(bytes, static_cast<size_t>(d), bytes))
      fail("{}: tensor \"{}\": shape too large (its byte size overflows)", file, name);
  }
  if (info.end < info.begin || info.end - info.begin != bytes)
    fail("{}: tensor \"{}\": data_offsets [{}, {}) do not match shape and dtype {} ({} bytes expected)", file, name,
         info.begin, info.end, info.dtype, bytes);
  return info;
}

}  // namespace

size_t dtype_bytes(const std::string& dtype) {
  static const std::map<std::string, size_t> table = {{"F32", 4}, {"BF16", 2}, {"F16", 2}, {"F64", 8}, {"I64", 8},
                                                      {"I32", 4}, {"I8", 1},   {"U8", 1},  {"BOOL", 1}};
  const auto it = table.find(dtype);
  return it == table.end() ? 0 : it->second;
}

SafetensorsHeader parse_safetensors_header(const uint8_t* data, size_t size, const std::string& file) {
  if (size < 8) fail("{}: truncated safetensors file ({} bytes, no header length)", file, size);
  uint64_t header_len = 0;
  std::memcpy(&header_len, data, 8);  // little-endian u64, as on every platform we build for
  if (header_len > size - 8)
    fail("{}: header length {} runs past the end of the file ({} bytes)", file, header_len, size);
  SafetensorsHeader header;
  header.data_start = 8 + header_len;
  json table;
  try {
    table = json::parse(data + 8, data + header.data_start);
  } catch (const json::parse_error& e) {
    fail("{}: malformed JSON header: {}", file, e.what());
  }
  if (!table.is_object()) fail("{}: header is not a JSON object", file);
  const size_t data_bytes = size - header.data_start;
  for (const auto& [name, entry] : table.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail("{}: __metadata__ is not an object", file);
      for (const auto& [k, v] : entry.items())
        if (v.is_string()) header.metadata[k] = v.get<std::string>();
      continue;
    }
    TensorInfo info = parse_tensor_entry(name, entry, file);
    if (info.end > data_bytes)
      fail("{}: tensor \"{}\" ends at byte {} but the file has only {} (truncated file?)", file, name,
           header.data_start + info.end, size);
    header.tensors.emplace(name, std::move(info));
  }
  return header;
}

}  // namespace kvbench
