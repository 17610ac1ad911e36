#include "io/hdf5.h"

#include <zlib.h>

#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>

#include "common/error.h"

namespace kvbench::h5 {

namespace {

// HDF5 prints its own error stack to stderr by default; we report failures as kvbench::Error instead.
void silence_hdf5_errors() {
  static const bool silenced = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)silenced;
}

Handle checked(hid_t id, Handle::Closer close, const std::string& what) {
  if (id < 0) fail("{}", what);
  return Handle(id, close);
}

void check(herr_t status, const std::string& what) {
  if (status < 0) fail("{}", what);
}

Handle string_type() {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.id(), H5T_VARIABLE);
  H5Tset_cset(type.id(), H5T_CSET_UTF8);
  return type;
}


// Frees what HDF5 allocated while reading variable-length data.
void reclaim(const Handle& type, const Handle& space, void* buffer) {
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(type.id(), space.id(), H5P_DEFAULT, buffer);
#else
  H5Dvlen_reclaim(type.id(), space.id(), H5P_DEFAULT, buffer);
#endif
}

std::string path_of(const Location& at, const std::string& name) { return at.where + "/" + name; }

void write_dataset(const Location& at, const std::string& name, hid_t file_type, hid_t memory_type, size_t count,
                   const void* data) {
  const hsize_t dims[1] = {count};
  Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose);
  Handle dataset = checked(H5Dcreate2(at.handle.id(), name.c_str(), file_type, space.id(), H5P_DEFAULT, H5P_DEFAULT,
                                      H5P_DEFAULT),
                           H5Dclose, fmt::format("{}: cannot create dataset", path_of(at, name)));
  if (count > 0)
    check(H5Dwrite(dataset.id(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
          fmt::format("{}: cannot write dataset", path_of(at, name)));
}

struct OpenDataset {
  Handle dataset, space;
  size_t count = 0;
};

OpenDataset open_dataset(const Location& at, const std::string& name, H5T_class_t expected_class) {
  if (!has_object(at, name)) fail("{}: missing dataset", path_of(at, name));
  OpenDataset d;
  d.dataset = checked(H5Dopen2(at.handle.id(), name.c_str(), H5P_DEFAULT), H5Dclose,
                      fmt::format("{}: cannot open dataset", path_of(at, name)));
  Handle type(H5Dget_type(d.dataset.id()), H5Tclose);
  if (H5Tget_class(type.id()) != expected_class) fail("{}: unexpected data type", path_of(at, name));
  d.space = Handle(H5Dget_space(d.dataset.id()), H5Sclose);
  if (H5Sget_simple_extent_ndims(d.space.id()) != 1) fail("{}: expected a 1-D dataset", path_of(at, name));
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(d.space.id(), dims, nullptr);
  // Every element kvbench writes takes at least a byte of the file: a larger count is a damaged
  // dataspace, refused before a vector of that size is allocated.
  Handle file(H5Iget_file_id(d.dataset.id()), H5Fclose);
  hsize_t file_bytes = 0;
  check(H5Fget_filesize(file.id(), &file_bytes), fmt::format("{}: cannot read the file size", path_of(at, name)));
  if (dims[0] > file_bytes)
    fail("{}: {} elements in a file of {} bytes (damaged dataspace)", path_of(at, name), dims[0], file_bytes);
  d.count = dims[0];
  return d;
}

template <class T>
std::vector<T> read_numeric(const Location& at, const std::string& name, H5T_class_t type_class, hid_t memory_type) {
  OpenDataset d = open_dataset(at, name, type_class);
  std::vector<T> values(d.count);
  if (d.count > 0)
    check(H5Dread(d.dataset.id(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
          fmt::format("{}: cannot read dataset", path_of(at, name)));
  return values;
}

Handle open_attribute(const Location& at, const std::string& name) {
  if (H5Aexists(at.handle.id(), name.c_str()) <= 0) fail("{}: missing attribute \"{}\"", at.where, name);
  return checked(H5Aopen(at.handle.id(), name.c_str(), H5P_DEFAULT), H5Aclose,
                 fmt::format("{}: cannot open attribute \"{}\"", at.where, name));
}

void write_scalar_attribute(const Location& at, const std::string& name, hid_t type, const void* value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attribute = checked(H5Acreate2(at.handle.id(), name.c_str(), type, space.id(), H5P_DEFAULT, H5P_DEFAULT),
                             H5Aclose, fmt::format("{}: cannot create attribute \"{}\"", at.where, name));
  check(H5Awrite(attribute.id(), type, value), fmt::format("{}: cannot write attribute \"{}\"", at.where, name));
}

template <class T>
T read_numeric_attribute(const Location& at, const std::string& name, H5T_class_t type_class, hid_t memory_type) {
  Handle attribute = open_attribute(at, name);
  Handle type(H5Aget_type(attribute.id()), H5Tclose);
  if (H5Tget_class(type.id()) != type_class) fail("{}: attribute \"{}\" has an unexpected type", at.where, name);
  T value{};
  check(H5Aread(attribute.id(), memory_type, &value), fmt::format("{}: cannot read attribute \"{}\"", at.where, name));
  return value;
}

// ---- The seal in the user block ----

constexpr hsize_t kUserBlock = 512;  // the smallest user block HDF5 allows
constexpr char kSealMagic[] = "kvbench-seal v1";

struct Seal {
  uint32_t crc = 0;
  uint64_t bytes = 0;
};

// CRC-32 and length of the file from the end of the user block on.
Seal body_seal(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.seekg(kUserBlock)) fail("{}: cannot read", path.string());
  Seal seal;
  seal.crc = static_cast<uint32_t>(crc32(0L, Z_NULL, 0));
  std::vector<char> chunk(1 << 20);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    seal.crc = static_cast<uint32_t>(
        crc32(seal.crc, reinterpret_cast<const Bytef*>(chunk.data()), static_cast<uInt>(in.gcount())));
    seal.bytes += static_cast<uint64_t>(in.gcount());
  }
  return seal;
}

constexpr char kHdf5Signature[] = "\x89HDF\r\n\x1a\n";

bool hdf5_signature_at(std::ifstream& in, std::streamoff offset) {
  std::array<char, sizeof kHdf5Signature - 1> bytes{};
  in.clear();
  return in.seekg(offset) && in.read(bytes.data(), bytes.size()) &&
         std::memcmp(bytes.data(), kHdf5Signature, bytes.size()) == 0;
}

// The seal recorded in the user block; nullopt for a file without one (h5py's, an older kvbench's: the
// HDF5 signature at byte 0). A file whose HDF5 data starts after a 512-byte user block was written by
// kvbench, so a missing or garbled seal there is damage, not a file of another writer.
std::optional<Seal> recorded_seal(const std::filesystem::path& path) {
  std::array<char, 64> head{};
  std::ifstream in(path, std::ios::binary);
  in.read(head.data(), head.size() - 1);
  if (std::strncmp(head.data(), kSealMagic, sizeof kSealMagic - 1) != 0) {
    if (hdf5_signature_at(in, 0) || !hdf5_signature_at(in, kUserBlock)) return std::nullopt;
    fail("{}: damaged seal in the file's user block (corrupted since kvbench wrote it); rerun its job or restore the "
         "file",
         path.string());
  }
  Seal seal;
  unsigned long long bytes = 0;
  if (std::sscanf(head.data() + sizeof kSealMagic - 1, " crc32=%" SCNx32 " bytes=%llu", &seal.crc, &bytes) != 2)
    fail("{}: damaged seal in the file's user block", path.string());
  seal.bytes = bytes;
  return seal;
}

void verify_seal(const std::filesystem::path& path) {
  const auto recorded = recorded_seal(path);
  if (!recorded) return;
  const Seal actual = body_seal(path);
  if (actual.bytes == recorded->bytes && actual.crc == recorded->crc) return;
  const std::string reason =
      actual.bytes != recorded->bytes
          ? fmt::format("{} bytes after the user block, {} when written: truncated or edited", actual.bytes,
                        recorded->bytes)
          : "checksum mismatch: corrupted or edited";
  fail("{}: changed since kvbench wrote it ({}); rerun its job (the journal keeps finished samples) or restore "
       "the file — after a deliberate edit, `kvbench inspect --reseal` accepts it",
       path.string(), reason);
}

// The user block HDF5 reserved when the file was created (0 for files of other writers).
hsize_t user_block_size(const std::filesystem::path& path) {
  silence_hdf5_errors();
  Handle file = checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose,
                        fmt::format("{}: not a readable HDF5 file", path.string()));
  Handle creation(H5Fget_create_plist(file.id()), H5Pclose);
  hsize_t size = 0;
  check(H5Pget_userblock(creation.id(), &size), fmt::format("{}: cannot read the user block size", path.string()));
  return size;
}

}  // namespace

void seal(const std::filesystem::path& path) {
  if (user_block_size(path) < kUserBlock)
    fail("{}: no user block to hold a seal (written by another program or an older kvbench); it is read unverified",
         path.string());
  const Seal seal = body_seal(path);
  std::array<char, kUserBlock> block{};
  std::snprintf(block.data(), block.size(), "%s crc32=%08" PRIx32 " bytes=%llu\n", kSealMagic, seal.crc,
                static_cast<unsigned long long>(seal.bytes));
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  if (!file.write(block.data(), block.size())) fail("{}: cannot write the seal", path.string());
}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    if (id_ >= 0 && close_) close_(id_);
    id_ = other.id_;
    close_ = other.close_;
    other.id_ = -1;
  }
  return *this;
}

Handle::~Handle() {
  if (id_ >= 0 && close_) close_(id_);
}

Location create_file(const std::filesystem::path& path) {
  silence_hdf5_errors();
  Handle creation(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
  check(H5Pset_userblock(creation.id(), kUserBlock), "cannot reserve the HDF5 user block");
  // Version-2 object headers and superblock carry HDF5's own metadata checksums too.
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  check(H5Pset_libver_bounds(access.id(), H5F_LIBVER_V18, H5F_LIBVER_LATEST), "cannot set HDF5 format bounds");
  return {checked(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, creation.id(), access.id()), H5Fclose,
                  fmt::format("{}: cannot create HDF5 file", path.string())),
          path.string() + ":"};
}

Location open_file(const std::filesystem::path& path) {
  silence_hdf5_errors();
  if (!std::filesystem::exists(path)) fail("{}: no such file", path.string());
  verify_seal(path);
  return {checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose,
                  fmt::format("{}: not a readable HDF5 file", path.string())),
          path.string() + ":"};
}

Location create_group(const Location& parent, const std::string& name) {
  return {checked(H5Gcreate2(parent.handle.id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                  fmt::format("{}: cannot create group", path_of(parent, name))),
          path_of(parent, name)};
}

Location open_group(const Location& parent, const std::string& name) {
  if (!has_object(parent, name)) fail("{}: missing group", path_of(parent, name));
  return {checked(H5Gopen2(parent.handle.id(), name.c_str(), H5P_DEFAULT), H5Gclose,
                  fmt::format("{}: cannot open group", path_of(parent, name))),
          path_of(parent, name)};
}

Location open_dataset(const Location& parent, const std::string& name) {
  if (!has_object(parent, name)) fail("{}: missing dataset", path_of(parent, name));
  return {checked(H5Dopen2(parent.handle.id(), name.c_str(), H5P_DEFAULT), H5Dclose,
                  fmt::format("{}: cannot open dataset", path_of(parent, name))),
          path_of(parent, name)};
}

bool has_object(const Location& parent, const std::string& name) {
  return H5Lexists(parent.handle.id(), name.c_str(), H5P_DEFAULT) > 0;
}

bool has_attribute(const Location& at, const std::string& name) { return H5Aexists(at.handle.id(), name.c_str()) > 0; }

void write_attribute(const Location& at, const std::string& name, const std::string& value) {
  const char* text = value.c_str();
  write_scalar_attribute(at, name, string_type().id(), &text);
}

void write_attribute(const Location& at, const std::string& name, double value) {
  write_scalar_attribute(at, name, H5T_NATIVE_DOUBLE, &value);
}

void write_attribute(const Location& at, const std::string& name, int64_t value) {
  write_scalar_attribute(at, name, H5T_NATIVE_INT64, &value);
}

std::string read_string_attribute(const Location& at, const std::string& name) {
  Handle attribute = open_attribute(at, name);
  Handle file_type(H5Aget_type(attribute.id()), H5Tclose);
  if (H5Tget_class(file_type.id()) != H5T_STRING || !H5Tis_variable_str(file_type.id()))
    fail("{}: attribute \"{}\" is not a variable-length string", at.where, name);
  Handle type = string_type();
  char* text = nullptr;
  check(H5Aread(attribute.id(), type.id(), &text), fmt::format("{}: cannot read attribute \"{}\"", at.where, name));
  std::string value = text ? text : "";
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  reclaim(type, space, &text);
  return value;
}

double read_double_attribute(const Location& at, const std::string& name) {
  return read_numeric_attribute<double>(at, name, H5T_FLOAT, H5T_NATIVE_DOUBLE);
}

int64_t read_int_attribute(const Location& at, const std::string& name) {
  return read_numeric_attribute<int64_t>(at, name, H5T_INTEGER, H5T_NATIVE_INT64);
}

void write_column(const Location& at, const std::string& name, const std::vector<int64_t>& values) {
  write_dataset(at, name, H5T_STD_I64LE, H5T_NATIVE_INT64, values.size(), values.data());
}

void write_column(const Location& at, const std::string& name, const std::vector<double>& values) {
  write_dataset(at, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.size(), values.data());
}

void write_column(const Location& at, const std::string& name, const std::vector<std::string>& values) {
  std::vector<const char*> pointers;
  for (const auto& value : values) pointers.push_back(value.c_str());
  Handle type = string_type();
  write_dataset(at, name, type.id(), type.id(), values.size(), pointers.data());
}

namespace {
template <class T>
void write_sequences(const Location& at, const std::string& name, const std::vector<std::vector<T>>& values,
                     hid_t file_element, hid_t memory_element) {
  std::vector<hvl_t> sequences;
  for (const auto& value : values) sequences.push_back({value.size(), const_cast<T*>(value.data())});
  Handle file_type(H5Tvlen_create(file_element), H5Tclose), memory_type(H5Tvlen_create(memory_element), H5Tclose);
  write_dataset(at, name, file_type.id(), memory_type.id(), values.size(), sequences.data());
}

template <class T>
std::vector<std::vector<T>> read_sequences(const Location& at, const std::string& name, hid_t memory_element) {
  OpenDataset d = open_dataset(at, name, H5T_VLEN);
  Handle type(H5Tvlen_create(memory_element), H5Tclose);
  std::vector<hvl_t> sequences(d.count);
  if (d.count > 0)
    check(H5Dread(d.dataset.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, sequences.data()),
          fmt::format("{}: cannot read dataset", path_of(at, name)));
  std::vector<std::vector<T>> values;
  for (const hvl_t& s : sequences) {
    const auto* data = static_cast<const T*>(s.p);
    values.emplace_back(data, data + s.len);
  }
  if (d.count > 0) reclaim(type, d.space, sequences.data());
  return values;
}
}  // namespace

void write_column(const Location& at, const std::string& name, const std::vector<std::vector<int64_t>>& values) {
  write_sequences(at, name, values, H5T_STD_I64LE, H5T_NATIVE_INT64);
}

void write_column(const Location& at, const std::string& name, const std::vector<std::vector<float>>& values) {
  write_sequences(at, name, values, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT);
}

std::vector<int64_t> read_int_column(const Location& at, const std::string& name) {
  return read_numeric<int64_t>(at, name, H5T_INTEGER, H5T_NATIVE_INT64);
}

std::vector<double> read_double_column(const Location& at, const std::string& name) {
  return read_numeric<double>(at, name, H5T_FLOAT, H5T_NATIVE_DOUBLE);
}

std::vector<std::string> read_string_column(const Location& at, const std::string& name) {
  OpenDataset d = open_dataset(at, name, H5T_STRING);
  Handle type = string_type();
  std::vector<char*> texts(d.count, nullptr);
  if (d.count > 0)
    check(H5Dread(d.dataset.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, texts.data()),
          fmt::format("{}: cannot read dataset", path_of(at, name)));
  std::vector<std::string> values;
  for (char* text : texts) values.emplace_back(text ? text : "");
  if (d.count > 0) reclaim(type, d.space, texts.data());
  return values;
}

std::vector<std::vector<int64_t>> read_int_sequence_column(const Location& at, const std::string& name) {
  return read_sequences<int64_t>(at, name, H5T_NATIVE_INT64);
}

std::vector<std::vector<float>> read_float_sequence_column(const Location& at, const std::string& name) {
  return read_sequences<float>(at, name, H5T_NATIVE_FLOAT);
}

void read_attribute(const Location& at, const std::string& name, std::string& value) {
  value = read_string_attribute(at, name);
}
void read_attribute(const Location& at, const std::string& name, int64_t& value) {
  value = read_int_attribute(at, name);
}
void read_attribute(const Location& at, const std::string& name, double& value) {
  value = read_double_attribute(at, name);
}
void read_column(const Location& at, const std::string& name, std::vector<std::string>& values) {
  values = read_string_column(at, name);
}
void read_column(const Location& at, const std::string& name, std::vector<int64_t>& values) {
  values = read_int_column(at, name);
}
void read_column(const Location& at, const std::string& name, std::vector<double>& values) {
  values = read_double_column(at, name);
}
void read_column(const Location& at, const std::string& name, std::vector<std::vector<int64_t>>& values) {
  values = read_int_sequence_column(at, name);
}
void read_column(const Location& at, const std::string& name, std::vector<std::vector<float>>& values) {
  values = read_float_sequence_column(at, name);
}

}  // namespace kvbench::h5
