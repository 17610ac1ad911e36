#include "run/models_cache.h"

#include <sys/wait.h>

#include <cstdlib>

#include "common/error.h"
#include "common/json_file.h"
#include "run/datasets.h"

namespace kvbench {

namespace {

// The manifest and the fetch script live in the source tree kvbench was built from.
const std::filesystem::path kSourceDir = KVBENCH_SOURCE_DIR;

std::string fetch_python() {
  if (const char* python = std::getenv("KVBENCH_PYTHON"); python && *python) return python;
  const auto venv = kSourceDir / ".venv/bin/python";
  return std::filesystem::exists(venv) ? venv.string() : "python3";
}

std::string shell_quoted(const std::string& word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::vector<CachedModel> cached_models() {
  const auto path = kSourceDir / "models/manifest.json";
  const json manifest = read_json_file(path);
  std::vector<CachedModel> models;
  for (const auto& [name, entry] : manifest.items()) {
    const auto field = [&](const char* key) {
      const json& value = require_field(entry, key, path);
      if (!value.is_string()) fail("{}: field \"{}.{}\" is not a string", path.string(), name, key);
      return value.get<std::string>();
    };
    models.push_back({name, field("what"), field("license"), field("requirement"), field("file"), field("sha256")});
  }
  return models;
}

std::filesystem::path models_root() {
  if (const char* root = std::getenv("KVBENCH_MODELS"); root && *root) return root;
  const char* home = std::getenv("HOME");
  if (!home || !*home) fail("neither $KVBENCH_MODELS nor $HOME is set");
  return std::filesystem::path(home) / ".cache/kvbench/models";
}

std::filesystem::path cached_model_path(const CachedModel& model) { return models_root() / model.name / model.file; }

CachedModelStatus cached_model_status(const CachedModel& model) {
  const auto path = cached_model_path(model);
  if (!std::filesystem::exists(path)) return CachedModelStatus::Missing;
  return sha256_of_file(path) == model.sha256 ? CachedModelStatus::Verified : CachedModelStatus::Corrupt;
}

std::string to_string(CachedModelStatus status) {
  switch (status) {
    case CachedModelStatus::Missing: return "missing";
    case CachedModelStatus::Verified: return "verified";
    case CachedModelStatus::Corrupt: return "sha256 mismatch";
  }
  return "";
}

void fetch_cached_models(const std::vector<std::string>& names) {
  std::string command = shell_quoted(fetch_python()) + " " + shell_quoted((kSourceDir / "scripts/fetch_models.py").string());
  for (const auto& name : names) command += " " + shell_quoted(name);
  if (const int status = std::system(command.c_str()); status != 0)
    fail("fetching models failed (exit status {}): {}", WIFEXITED(status) ? WEXITSTATUS(status) : status, command);
}

}  // namespace kvbench
