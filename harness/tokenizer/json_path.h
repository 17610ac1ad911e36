// Reading tokenizer files with errors that name the file and the dotted path of the offending field.
#pragma once
#include <filesystem>
#include <string>

#include "common/json_file.h"

namespace kvbench::tokenizer_json {

// A JSON value together with where it came from, e.g. tokenizer.json + "model.merges[3]".
struct Node {
  const json& value;
  const std::filesystem::path& file;
  std::string path;

  Node at(const std::string& name) const;                      // required object field
  bool has(const std::string& name) const;                     // present and not null
  Node at(std::size_t index) const;                            // array element
  std::string string() const;
  std::int64_t integer() const;
  bool boolean() const;
  const json& array() const;
  std::string type() const;                                    // the "type" field of a pipeline stage
  [[noreturn]] void fail_here(const std::string& problem) const;
  [[noreturn]] void unsupported_type() const;
};

}  // namespace kvbench::tokenizer_json
