// JSON Lines input with errors that name `file:line`, and typed field access that names the record.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvbench::tasks {

using json = nlohmann::json;

struct JsonlLine {
  json value;
  std::string location;  // "path:line", for error messages
};

// Every non-blank line parsed as one JSON value. Throws kvbench::Error "path:line: malformed JSON ..."
// (a truncated last line included) or "path: cannot open file".
std::vector<JsonlLine> read_jsonl(const std::filesystem::path& path);

// `object[name]`, which must be a string; a number is accepted and printed (ids like 60, levels like 3).
// Throws kvbench::Error "<where>: missing field "name"" / "... is not a string".
std::string string_field(const json& object, const std::string& name, const std::string& where);

}  // namespace kvbench::tasks
