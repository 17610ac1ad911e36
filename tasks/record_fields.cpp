#include "tasks/record_fields.h"

#include <utility>

#include "common/error.h"

namespace kvbench::tasks {

using json = nlohmann::json;

namespace {

const char* type_name(json::value_t type) {
  switch (type) {
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "a number";
  }
}

}  // namespace

RecordFields::RecordFields(std::filesystem::path file, std::string record)
    : file_(std::move(file)), record_(std::move(record)) {}

RecordFields RecordFields::nested(std::string_view record) const {
  return RecordFields(file_, fmt::format("{}, {}", record_, record));
}

void RecordFields::fail(std::string_view problem) const {
  kvbench::fail("{}: {}: {}", file_.string(), record_, problem);
}

const json& RecordFields::field(const json& object, std::string_view name) const {
  if (!object.is_object()) fail(fmt::format("expected an object holding field \"{}\", got {}", name, object.type_name()));
  auto it = object.find(name);
  if (it == object.end()) fail(fmt::format("field \"{}\" is missing", name));
  return *it;
}

const json& RecordFields::expect(const json& value, json::value_t type, std::string_view what) const {
  if (value.type() != type) fail(fmt::format("{} should be {}, got {}", what, type_name(type), value.type_name()));
  return value;
}

std::string RecordFields::string(const json& object, std::string_view name) const {
  return expect(field(object, name), json::value_t::string, fmt::format("field \"{}\"", name)).get<std::string>();
}

std::string RecordFields::text(const json& object, std::string_view name) const {
  const json& value = field(object, name);
  if (value.is_number_integer()) return value.dump();
  return string(object, name);
}

long long RecordFields::integer(const json& object, std::string_view name) const {
  const json& value = field(object, name);
  if (!value.is_number_integer()) fail(fmt::format("field \"{}\" should be an integer, got {}", name, value.dump()));
  return value.get<long long>();
}

bool RecordFields::boolean(const json& object, std::string_view name) const {
  return expect(field(object, name), json::value_t::boolean, fmt::format("field \"{}\"", name)).get<bool>();
}

const json& RecordFields::array(const json& object, std::string_view name) const {
  return expect(field(object, name), json::value_t::array, fmt::format("field \"{}\"", name));
}

const json& RecordFields::object(const json& object, std::string_view name) const {
  return expect(field(object, name), json::value_t::object, fmt::format("field \"{}\"", name));
}

}  // namespace kvbench::tasks
