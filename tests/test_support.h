// Locating ../shared for tests. Tests that need it skip with a clear message when it is absent
// (users do not have it); CI has it, so there they always run.
#pragma once
#include <catch2/catch.hpp>
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
