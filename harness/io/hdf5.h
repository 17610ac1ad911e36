// A thin layer over the HDF5 C API: RAII handles and the few typed reads/writes the results file needs
// (1-D columns of int64, float64, variable-length UTF-8 strings and variable-length int64 and float32 sequences;
// scalar attributes). Every failure is a kvbench::Error naming the file and the object.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kvbench::h5 {

// Owns one hid_t and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle();
  hid_t id() const { return id_; }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// A file or a group: where columns and attributes live. `where` names it in error messages.
struct Location {
  Handle handle;
  std::string where;
};

// Files kvbench writes reserve HDF5's 512-byte user block for a seal: the CRC-32 and length of
// everything after it, written by seal() once the file is closed and checked by open_file() before
// HDF5 parses a byte. A truncated or corrupted file is then a clear error, never a crash or a hang
// inside libhdf5. Files without a seal (older kvbench, other writers) are read as they are.
Location create_file(const std::filesystem::path& path);  // truncates
void seal(const std::filesystem::path& path);              // after every handle of the file is closed
Location open_file(const std::filesystem::path& path);    // read-only; a sealed file must match its seal
Location create_group(const Location& parent, const std::string& name);
Location open_group(const Location& parent, const std::string& name);
// A dataset as a Location, to attach attributes to it (e.g. the definition of what it holds).
Location open_dataset(const Location& parent, const std::string& name);
bool has_object(const Location& parent, const std::string& name);
bool has_attribute(const Location& at, const std::string& name);

void write_attribute(const Location& at, const std::string& name, const std::string& value);
void write_attribute(const Location& at, const std::string& name, double value);
void write_attribute(const Location& at, const std::string& name, int64_t value);
std::string read_string_attribute(const Location& at, const std::string& name);
double read_double_attribute(const Location& at, const std::string& name);
int64_t read_int_attribute(const Location& at, const std::string& name);

void write_column(const Location& at, const std::string& name, const std::vector<int64_t>& values);
void write_column(const Location& at, const std::string& name, const std::vector<double>& values);
void write_column(const Location& at, const std::string& name, const std::vector<std::string>& values);
void write_column(const Location& at, const std::string& name, const std::vector<std::vector<int64_t>>& values);
void write_column(const Location& at, const std::string& name, const std::vector<std::vector<float>>& values);

std::vector<int64_t> read_int_column(const Location& at, const std::string& name);
std::vector<double> read_double_column(const Location& at, const std::string& name);
std::vector<std::string> read_string_column(const Location& at, const std::string& name);
std::vector<std::vector<int64_t>> read_int_sequence_column(const Location& at, const std::string& name);
std::vector<std::vector<float>> read_float_sequence_column(const Location& at, const std::string& name);

// Overloads by element type, for code generic over a struct's fields.
void read_attribute(const Location& at, const std::string& name, std::string& value);
void read_attribute(const Location& at, const std::string& name, int64_t& value);
void read_attribute(const Location& at, const std::string& name, double& value);
void read_column(const Location& at, const std::string& name, std::vector<std::string>& values);
void read_column(const Location& at, const std::string& name, std::vector<int64_t>& values);
void read_column(const Location& at, const std::string& name, std::vector<double>& values);
void read_column(const Location& at, const std::string& name, std::vector<std::vector<int64_t>>& values);
void read_column(const Location& at, const std::string& name, std::vector<std::vector<float>>& values);

}  // namespace kvbench::h5
