// Reading JSON files with errors that name the file (and, for parse errors, the byte offset).
#pragma once
#include <nlohmann/json.hpp>
#include <filesystem>
#include <string>

namespace kvbench {

using json = nlohmann::json;

std::string read_text_file(const std::filesystem::path& path);
json read_json_file(const std::filesystem::path& path);

// Field access that reports `file: field "name" ...` instead of nlohmann's bare type errors.
const json& require_field(const json& object, const std::string& name, const std::filesystem::path& file);

}  // namespace kvbench
