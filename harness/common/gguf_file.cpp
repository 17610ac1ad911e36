#include "common/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <fstream>

#include "common/error.h"

namespace kvbench {

namespace {

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr std::uint64_t kMaxCount = 1u << 28;  // no real file has more keys, tensors or array items
constexpr std::uint64_t kMaxElements = 1ull << 44;  // per tensor; no file holds a larger one

struct BlockLayout {
  std::int64_t elements;  // per block
  std::size_t bytes;      // per block
};

// ggml's type traits (ggml.c: blck_size, type_size) for the types kvbench reads.
std::optional<BlockLayout> block_layout(GgmlType type) {
  switch (type) {
    case GgmlType::F32: return BlockLayout{1, 4};
    case GgmlType::F16:
    case GgmlType::BF16: return BlockLayout{1, 2};
    case GgmlType::Q4_0: return BlockLayout{32, 18};
    case GgmlType::Q4_1: return BlockLayout{32, 20};
    case GgmlType::Q5_0: return BlockLayout{32, 22};
    case GgmlType::Q5_1: return BlockLayout{32, 24};
    case GgmlType::Q8_0: return BlockLayout{32, 34};
    case GgmlType::Q8_1: return BlockLayout{32, 36};
    case GgmlType::Q2_K: return BlockLayout{256, 84};
    case GgmlType::Q3_K: return BlockLayout{256, 110};
    case GgmlType::Q4_K: return BlockLayout{256, 144};
    case GgmlType::Q5_K: return BlockLayout{256, 176};
    case GgmlType::Q6_K: return BlockLayout{256, 210};
    case GgmlType::Q8_K: return BlockLayout{256, 292};
  }
  return std::nullopt;
}

// Sequential little-endian reads over the mapping; every read is bounds-checked.
class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size, const std::string& file) : data_(data), size_(size), file_(file) {}

  template <class T>
  T scalar(const char* what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  std::string string(const char* what) {
    const auto length = scalar<std::uint64_t>(what);
    need(length, what);
    std::string text(reinterpret_cast<const char*>(data_ + pos_), length);
    pos_ += length;
    return text;
  }
  std::uint64_t count(const char* what) {
    const auto n = scalar<std::uint64_t>(what);
    if (n > kMaxCount) fail("{}: {} {} is implausibly large (corrupt file?)", file_, what, n);
    return n;
  }
  std::size_t position() const { return pos_; }

 private:
  void need(std::uint64_t bytes, const char* what) const {
    if (bytes > size_ - pos_) fail("{}: truncated while reading {} at byte {}", file_, what, pos_);
  }
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  const std::string& file_;
};

enum ValueType : std::uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STRING = 8, ARRAY = 9, U64 = 10, I64 = 11, F64 = 12
};

json read_value(Reader& in, std::uint32_t type, const std::string& key, const std::string& file, bool in_array) {
  switch (type) {
    case U8: return in.scalar<std::uint8_t>("a value");
    case I8: return in.scalar<std::int8_t>("a value");
    case U16: return in.scalar<std::uint16_t>("a value");
    case I16: return in.scalar<std::int16_t>("a value");
    case U32: return in.scalar<std::uint32_t>("a value");
    case I32: return in.scalar<std::int32_t>("a value");
    case U64: return in.scalar<std::uint64_t>("a value");
    case I64: return in.scalar<std::int64_t>("a value");
    case F32: return static_cast<double>(in.scalar<float>("a value"));
    case F64: return in.scalar<double>("a value");
    case BOOL: return in.scalar<std::uint8_t>("a value") != 0;
    case STRING: return in.string("a string value");
    case ARRAY: {
      if (in_array) fail("{}: metadata \"{}\": nested arrays are not supported", file, key);
      const auto item_type = in.scalar<std::uint32_t>("an array's item type");
      const auto n = in.count("an array's length");
      json items = json::array();
      for (std::uint64_t i = 0; i < n; ++i) items.push_back(read_value(in, item_type, key, file, true));
      return items;
    }
  }
  fail("{}: metadata \"{}\": unknown value type {}", file, key, type);
}

}  // namespace

std::string ggml_type_name(GgmlType type) {
  static const std::map<GgmlType, const char*> names = {
      {GgmlType::F32, "F32"},   {GgmlType::F16, "F16"},   {GgmlType::BF16, "BF16"}, {GgmlType::Q4_0, "Q4_0"},
      {GgmlType::Q4_1, "Q4_1"}, {GgmlType::Q5_0, "Q5_0"}, {GgmlType::Q5_1, "Q5_1"}, {GgmlType::Q8_0, "Q8_0"},
      {GgmlType::Q8_1, "Q8_1"}, {GgmlType::Q2_K, "Q2_K"}, {GgmlType::Q3_K, "Q3_K"}, {GgmlType::Q4_K, "Q4_K"},
      {GgmlType::Q5_K, "Q5_K"}, {GgmlType::Q6_K, "Q6_K"}, {GgmlType::Q8_K, "Q8_K"}};
  const auto it = names.find(type);
  return it != names.end() ? it->second : fmt::format("type {}", static_cast<std::uint32_t>(type));
}

std::int64_t GgufTensor::elements() const {
  std::int64_t n = 1;
  for (const auto d : dims) n *= d;
  return n;
}

GgufFile::GgufFile(const std::filesystem::path& path) : path_(path) {
  const std::string file = path.string();
  const int fd = ::open(file.c_str(), O_RDONLY);
  if (fd < 0) fail("{}: cannot open ({})", file, std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  size_ = static_cast<std::size_t>(st.st_size);
  void* mapped = size_ ? ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (mapped == MAP_FAILED) fail("{}: {}", file, size_ ? "mmap failed" : "empty file, not GGUF");
  mapped_ = static_cast<const std::uint8_t*>(mapped);
  try {
    Reader in(mapped_, size_, file);
    if (in.scalar<std::uint32_t>("the magic") != kMagic) fail("{}: not a GGUF file (no GGUF magic)", file);
    version_ = in.scalar<std::uint32_t>("the version");
    if (version_ != 2 && version_ != 3) fail("{}: GGUF version {} is not supported (2 and 3 are)", file, version_);
    const auto tensor_count = in.count("the tensor count");
    const auto kv_count = in.count("the metadata count");
    for (std::uint64_t i = 0; i < kv_count; ++i) {
      const std::string key = in.string("a metadata key");
      const auto type = in.scalar<std::uint32_t>("a metadata type");
      if (metadata_.contains(key)) fail_at(key, "listed twice");
      metadata_[key] = read_value(in, type, key, file, false);
    }
    std::vector<std::pair<GgufTensor, std::uint64_t>> directory;
    for (std::uint64_t i = 0; i < tensor_count; ++i) {
      GgufTensor t{in.string("a tensor name"), GgmlType::F32, {}, nullptr, 0};
      const auto n_dims = in.scalar<std::uint32_t>("a tensor's rank");
      if (n_dims == 0 || n_dims > 4) fail("{}: tensor \"{}\": rank {} (ggml allows 1 to 4)", file, t.name, n_dims);
      std::uint64_t elements = 1;
      for (std::uint32_t d = 0; d < n_dims; ++d) {
        const auto dim = in.scalar<std::uint64_t>("a tensor dimension");
        if (dim == 0 || dim > kMaxElements / elements)  // also keeps elements() and the byte count from overflowing
          fail("{}: tensor \"{}\": dimension {} out of range", file, t.name, dim);
        elements *= dim;
        t.dims.push_back(static_cast<std::int64_t>(dim));
      }
      t.type = static_cast<GgmlType>(in.scalar<std::uint32_t>("a tensor type"));
      directory.emplace_back(std::move(t), in.scalar<std::uint64_t>("a tensor offset"));
    }
    const std::uint64_t alignment = metadata_.contains("general.alignment") ? integer("general.alignment") : 32;
    if (alignment == 0 || (alignment & (alignment - 1))) fail_at("general.alignment", "not a power of two");
    const std::size_t data_start = (in.position() + alignment - 1) / alignment * alignment;
    for (auto& [t, offset] : directory) {
      if (const auto layout = block_layout(t.type)) {
        if (t.dims[0] % layout->elements)
          fail("{}: tensor \"{}\": row length {} is not a multiple of {}'s block of {}", file, t.name, t.dims[0],
               ggml_type_name(t.type), layout->elements);
        t.bytes = static_cast<std::size_t>(t.elements() / layout->elements) * layout->bytes;
      }
      if (offset % alignment || data_start > size_ || offset > size_ - data_start || t.bytes > size_ - data_start - offset)
        fail("{}: tensor \"{}\": data at offset {} (+{} bytes) lies outside the file", file, t.name, offset, t.bytes);
      t.data = mapped_ + data_start + offset;
      const std::string name = t.name;
      if (!tensors_.emplace(name, std::move(t)).second) fail("{}: tensor \"{}\" is listed twice", file, name);
    }
  } catch (...) {
    ::munmap(const_cast<std::uint8_t*>(mapped_), size_);  // the destructor does not run for a throwing constructor
    throw;
  }
}

GgufFile::~GgufFile() { ::munmap(const_cast<std::uint8_t*>(mapped_), size_); }

const GgufTensor& GgufFile::tensor(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) fail("{}: missing tensor \"{}\"", path_.string(), name);
  return it->second;
}

void GgufFile::fail_at(const std::string& key, const std::string& problem) const {
  fail("{}: metadata \"{}\": {}", path_.string(), key, problem);
}

std::string GgufFile::string(const std::string& key) const {
  if (!has(key)) fail_at(key, "missing");
  if (!metadata_.at(key).is_string()) fail_at(key, "expected a string");
  return metadata_.at(key).get<std::string>();
}

std::int64_t GgufFile::integer(const std::string& key) const {
  if (!has(key)) fail_at(key, "missing");
  if (!metadata_.at(key).is_number_integer()) fail_at(key, "expected an integer");
  return metadata_.at(key).get<std::int64_t>();
}

double GgufFile::number(const std::string& key) const {
  if (!has(key)) fail_at(key, "missing");
  if (!metadata_.at(key).is_number()) fail_at(key, "expected a number");
  return metadata_.at(key).get<double>();
}

bool is_gguf_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::uint32_t magic = 0;
  return std::filesystem::is_regular_file(path) && in.read(reinterpret_cast<char*>(&magic), 4) && magic == kMagic;
}

std::filesystem::path gguf_model_file(const std::filesystem::path& model) {
  if (is_gguf_file(model)) return model;
  if (!std::filesystem::is_directory(model) || std::filesystem::exists(model / "config.json")) return {};
  std::filesystem::path found;
  for (const auto& entry : std::filesystem::directory_iterator(model)) {
    if (entry.path().extension() != ".gguf") continue;
    if (!found.empty()) fail("{}: holds more than one .gguf file; name the one to load", model.string());
    found = entry.path();
  }
  return found;
}

}  // namespace kvbench
