// Typed field access for records of JSON datasets, with errors that name the file and the record
// ("qasper-test-v0.3.json: paper 1911.10742, question 397a1e85…: field \"answers\" is missing").
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kvbench::tasks {

class RecordFields {
 public:
  RecordFields(std::filesystem::path file, std::string record);

  // The same file, a record nested in this one (e.g. a question inside a paper).
  RecordFields nested(std::string_view record) const;

  const nlohmann::json& field(const nlohmann::json& object, std::string_view name) const;
  std::string string(const nlohmann::json& object, std::string_view name) const;
  // A string, or an integer written in decimal (some datasets store answers such as 2022 as numbers).
  std::string text(const nlohmann::json& object, std::string_view name) const;
  long long integer(const nlohmann::json& object, std::string_view name) const;
  bool boolean(const nlohmann::json& object, std::string_view name) const;
  const nlohmann::json& array(const nlohmann::json& object, std::string_view name) const;
  const nlohmann::json& object(const nlohmann::json& object, std::string_view name) const;

  // Checks that a value (e.g. an element of an array) has the expected type.
  const nlohmann::json& expect(const nlohmann::json& value, nlohmann::json::value_t type, std::string_view what) const;

  [[noreturn]] void fail(std::string_view problem) const;

 private:
  std::filesystem::path file_;
  std::string record_;
};

}  // namespace kvbench::tasks
