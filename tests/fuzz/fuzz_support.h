// Shared by the fuzz targets: the input as text, split into parts, or written to a scratch file for
// the readers that take a path.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>

#include "common/error.h"

namespace kvbench::fuzz {

inline std::string_view text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Before and after the first '\x1f' (unit separator): two strings from one input (prediction, gold).
inline std::pair<std::string_view, std::string_view> split(std::string_view input) {
  const size_t at = input.find('\x1f');
  if (at == std::string_view::npos) return {input, {}};
  return {input.substr(0, at), input.substr(at + 1)};
}

// A per-process scratch directory (fuzzing may run several processes side by side).
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("kvbench-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::filesystem::path write_scratch(const std::string& name, std::string_view bytes) {
  const auto path = scratch() / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// Runs a reader: a kvbench::Error is the expected answer to bad input; anything else escapes and is a
// finding (libFuzzer reports the uncaught exception as a crash).
template <class F>
void expect_clean(F&& read) {
  try {
    read();
  } catch (const kvbench::Error&) {
  }
}

}  // namespace kvbench::fuzz
