// Locating ../shared for tests. Tests that need it skip with a clear message when it is absent
// (users do not have it); CI has it, so there they always run.
#pragma once
#include <catch2/catch.hpp>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

namespace kvbench::testing {

inline std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("KVBENCH_SHARED")) return env;
  return KVBENCH_SHARED_DIR;
}

inline std::filesystem::path source_dir() { return KVBENCH_SOURCE_DIR; }
inline std::string kvbench_binary() { return KVBENCH_BINARY; }

// The Python of the peers' environment (HF tokenizers and transformers, kvpress, math-verify), which
// scripts/setup.sh makes in .venv; KVBENCH_PYTHON points elsewhere.
inline std::string peer_python() {
  if (const char* env = std::getenv("KVBENCH_PYTHON")) return env;
  return std::string(KVBENCH_SOURCE_DIR) + "/.venv/bin/python";
}

// Whether the peers' Python can import `module`. A user's clone without the environment skips the
// comparison; CI (CI set) has made it, so there its absence fails the test instead.
inline bool peer_available(const std::string& module) {
  const std::string command = "'" + peer_python() + "' -c 'import " + module + "' > /dev/null 2>&1";
  if (std::system(command.c_str()) == 0) return true;
  const std::string message = peer_python() + " cannot import " + module + " (run scripts/setup.sh)";
  if (std::getenv("CI") != nullptr) FAIL("CI: " << message);
  WARN("skipped: " << message);
  return false;
}

// The standard output of a shell command (a peer's reference script); the test fails if it cannot start.
inline std::string run_command(const std::string& command) {
  std::unique_ptr<FILE, decltype(&pclose)> pipe(popen(command.c_str(), "r"), &pclose);
  REQUIRE(pipe);
  std::string output;
  std::array<char, 1 << 16> buffer;
  while (const std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe.get())) output.append(buffer.data(), n);
  return output;
}

// A model of kvbench's models cache (`kvbench models fetch`, scripts/setup.sh): $KVBENCH_MODELS, else
// ~/.cache/kvbench/models. `file` is the file inside the model's folder, e.g. its .gguf.
inline std::filesystem::path cached_model(const std::string& name, const std::string& file) {
  const char* root = std::getenv("KVBENCH_MODELS");
  const char* home = std::getenv("HOME");
  const std::filesystem::path base = root ? root : std::filesystem::path(home ? home : "/") / ".cache/kvbench/models";
  return base / name / file;
}

// SmolLM2-135M-Instruct's GGUF (models/manifest.json), the real instruct model every machine has after setup.
inline std::filesystem::path smollm2_gguf() {
  return cached_model("smollm2-135m-instruct", "SmolLM2-135M-Instruct.Q4_1.gguf");
}

// Whether a cached model file is there: without it a user's clone skips the test, CI (which ran setup) fails it.
inline bool cached_model_available(const std::filesystem::path& file) {
  if (std::filesystem::exists(file)) return true;
  const std::string message = file.string() + " not found (run scripts/setup.sh or `kvbench models fetch`)";
  if (std::getenv("CI") != nullptr) FAIL("CI: " << message);
  WARN("skipped: " << message);
  return false;
}

// A directory of this process's own in the temp directory, removed with its contents when the process exits:
// ctest runs each test case in a process of its own, several at once (with fixed names one case deleted
// another's files), and a case that fails half-way still leaves nothing behind.
inline const std::filesystem::path& scratch_dir() {
  struct Directory {
    std::filesystem::path path = std::filesystem::temp_directory_path() / ("kvbench_" + std::to_string(::getpid()));
    Directory() { std::filesystem::create_directories(path); }
    ~Directory() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Directory directory;
  return directory.path;
}

// A path in scratch_dir() for a scratch file or directory `name` (its extension kept).
inline std::filesystem::path scratch_path(const std::string& name) { return scratch_dir() / name; }

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
