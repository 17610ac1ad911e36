// Runs the independent numpy references in ../shared/tools (with Debian's /usr/bin/python3) and
// returns what they print as JSON.
#pragma once
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "common/json_file.h"
#include "test_support.h"

namespace kvbench::testing {

inline bool python_oracle_available() {
  return std::filesystem::exists(shared_dir() / "tools" / "ref_decoder.py") &&
         std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

// `script` runs with ../shared/tools on sys.path and must print one JSON document.
inline json run_python_oracle(const std::string& script) {
  const auto path = kvbench::testing::scratch_path("oracle.py");
  std::ofstream(path) << "import sys, json\nsys.path.insert(0, " << json((shared_dir() / "tools").string()).dump()
                      << ")\n" << script;
  FILE* pipe = ::popen(("/usr/bin/python3 " + path.string()).c_str(), "r");
  std::string out;
  char buffer[65536];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  std::filesystem::remove(path);
  if (status != 0) fail("python oracle failed (status {}): {}", status, out);
  return json::parse(out);
}

}  // namespace kvbench::testing
