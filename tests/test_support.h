// Locating ../shared for tests. Tests that need it skip with a clear message when it is absent
// (users do not have it); CI has it, so there they always run.
#pragma once
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace kvbench::testing {

inline std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("KVBENCH_SHARED")) return env;
  return KVBENCH_SHARED_DIR;
}

inline std::filesystem::path source_dir() { return KVBENCH_SOURCE_DIR; }
inline std::string kvbench_binary() { return KVBENCH_BINARY; }

// A path in the temp directory for this process's scratch file or directory `name` (its extension kept):
// ctest runs each test case in a process of its own, several at once, and with fixed names one case
// deleted another's files.
inline std::filesystem::path scratch_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("kvbench_" + std::to_string(::getpid()) + "_" + name);
}

}  // namespace kvbench::testing

// Returns from the enclosing test case (with a warning) when shared/<relative> is missing.
#define KVBENCH_REQUIRE_SHARED(relative)                                                          \
  do {                                                                                            \
    if (!std::filesystem::exists(kvbench::testing::shared_dir() / (relative))) {                  \
      WARN("skipped: " << (kvbench::testing::shared_dir() / (relative)).string()                \
                       << " not found (set KVBENCH_SHARED to the shared data directory)");        \
      return;                                                                                     \
    }                                                                                             \
  } while (0)
