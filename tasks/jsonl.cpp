#include "tasks/jsonl.h"

#include <fstream>

#include "common/error.h"

namespace kvbench::tasks {

namespace {
bool is_blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }
}  // namespace

std::vector<JsonlLine> read_jsonl(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open file", path.string());
  std::vector<JsonlLine> lines;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (is_blank(text)) continue;
    std::string location = fmt::format("{}:{}", path.string(), number);
    try {
      lines.push_back({json::parse(text), std::move(location)});
    } catch (const json::parse_error& e) {
      fail("{}: malformed JSON at column {}: {}", location, e.byte, e.what());
    }
  }
  return lines;
}

std::string string_field(const json& object, const std::string& name, const std::string& where) {
  if (!object.is_object()) fail("{}: expected a JSON object holding field \"{}\"", where, name);
  auto it = object.find(name);
  if (it == object.end()) fail("{}: missing field \"{}\"", where, name);
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number()) return it->dump();
  fail("{}: field \"{}\" is not a string (got {})", where, name, it->type_name());
}

}  // namespace kvbench::tasks
