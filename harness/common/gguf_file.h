// GGUF (llama.cpp's model file, version 2 and 3): the metadata key/values and the tensor directory of a
// memory-mapped file, validated up front (bounds, types, offsets) so a bad file fails with its name and
// the offending key or tensor, not a crash. What the values mean (a model config, a vocabulary, quantized
// blocks) is read elsewhere: model/gguf_weights.h, tokenizer/gguf_vocab.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/json_file.h"

namespace kvbench {

// ggml's tensor types (ggml.h's enum ggml_type); the file may name others, which stay as their number.
enum class GgmlType : std::uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, BF16 = 30,
};
// "Q4_K", … ; "type 23" for a number this list does not name.
std::string ggml_type_name(GgmlType type);

struct GgufTensor {
  std::string name;                // llama.cpp's name, e.g. "blk.0.attn_q.weight"
  GgmlType type;
  std::vector<std::int64_t> dims;  // ggml order: dims[0] is the contiguous (row) length
  const std::uint8_t* data;        // into the mapping; valid while the GgufFile lives
  std::size_t bytes;               // 0 for a type whose block size this reader does not know
  std::int64_t elements() const;
};

class GgufFile {
 public:
  explicit GgufFile(const std::filesystem::path& path);
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::uint32_t version() const { return version_; }
  // Every key: integers and booleans as JSON numbers/booleans, floats as doubles, strings, arrays as arrays.
  const json& metadata() const { return metadata_; }
  const std::map<std::string, GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor& tensor(const std::string& name) const;  // throws naming the file and tensor

  // Typed reads of metadata that throw `FILE: metadata "key": …` when missing or of another type.
  std::string string(const std::string& key) const;
  std::int64_t integer(const std::string& key) const;
  double number(const std::string& key) const;
  bool has(const std::string& key) const { return metadata_.contains(key); }
  [[noreturn]] void fail_at(const std::string& key, const std::string& problem) const;

 private:
  std::filesystem::path path_;
  const std::uint8_t* mapped_ = nullptr;
  std::size_t size_ = 0;
  std::uint32_t version_ = 0;
  json metadata_ = json::object();
  std::map<std::string, GgufTensor> tensors_;
};

// True when `path` is a file starting with GGUF's magic.
bool is_gguf_file(const std::filesystem::path& path);
// A model given as a .gguf file, or a directory with exactly one .gguf and no config.json: that file; else empty.
std::filesystem::path gguf_model_file(const std::filesystem::path& model);

}  // namespace kvbench
