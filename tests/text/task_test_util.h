// Helpers for the task tests: files written to the temp directory, and the error a task's loader raises.
#pragma once
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "tasks/task.h"
#include "test_support.h"

namespace kvbench::testing {

// Writes `text` byte for byte to the temp directory as `name`.
inline std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  auto path = scratch_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The message of the error `task` raises loading `text` (written as `name`); the message must name the file.
inline std::string load_error(const tasks::Task& task, const std::string& name, const std::string& text) {
  const auto path = write_temp(name, text);
  std::string message;
  try {
    task.load(path);
  } catch (const kvbench::Error& e) {
    message = e.what();
  }
  std::filesystem::remove(path);
  CHECK_THAT(message, Catch::Contains(path.string()));
  return message;
}

}  // namespace kvbench::testing
