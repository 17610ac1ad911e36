// Reading JSON files with errors that name the file (and, for parse errors, the byte offset).
#pragma once
#include <nlohmann/json.hpp>
#include <filesystem>
#include <string>

namespace kvbench {

using json = nlohmann::json;

std::string read_text_file(const std::filesystem::path& path);
json read_json_file(const std::filesystem::path& path);
// The same with objects' members in the file's order (json sorts them by key): for datasets whose order a
// protocol follows (Python's json.load keeps it, and the reference code iterates dicts).
nlohmann::ordered_json read_ordered_json_file(const std::filesystem::path& path);

// Field access that reports `file: field "name" ...` instead of nlohmann's bare type errors.
const json& require_field(const json& object, const std::string& name, const std::filesystem::path& file);

// Writes `text` (or `value`, indented, with a final newline) through a temporary file renamed into
// place, so a failure never leaves a half-written file behind.
void write_file_atomically(const std::filesystem::path& file, const std::string& text);
void write_json_file(const std::filesystem::path& file, const json& value);

}  // namespace kvbench
