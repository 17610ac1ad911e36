#include "common/json_file.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/error.h"

namespace kvbench {

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open file", path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

namespace {
template <class Json>
Json parse_json_file(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  try {
    return Json::parse(text);
  } catch (const typename Json::parse_error& e) {
    fail("{}: malformed JSON at byte {}: {}", path.string(), e.byte, e.what());
  }
}
}  // namespace

json read_json_file(const std::filesystem::path& path) { return parse_json_file<json>(path); }
nlohmann::ordered_json read_ordered_json_file(const std::filesystem::path& path) {
  return parse_json_file<nlohmann::ordered_json>(path);
}

const json& require_field(const json& object, const std::string& name, const std::filesystem::path& file) {
  if (!object.is_object()) fail("{}: expected a JSON object holding field \"{}\"", file.string(), name);
  auto it = object.find(name);
  if (it == object.end()) fail("{}: missing field \"{}\"", file.string(), name);
  return *it;
}

void write_file_atomically(const std::filesystem::path& file, const std::string& text) {
  const auto temporary = file.parent_path() / (file.filename().string() + ".tmp" + std::to_string(::getpid()));
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out.flush()) {
      std::filesystem::remove(temporary);
      fail("{}: cannot write", file.string());
    }
  }
  std::filesystem::rename(temporary, file);
}

void write_json_file(const std::filesystem::path& file, const json& value) {
  write_file_atomically(file, value.dump(2) + "\n");
}

}  // namespace kvbench
