#include "tokenizer/json_path.h"

#include "common/error.h"

namespace kvbench::tokenizer_json {

void Node::fail_here(const std::string& problem) const {
  fail("{}: field \"{}\": {}", file.string(), path, problem);
}

Node Node::at(const std::string& name) const {
  if (!value.is_object()) fail_here("expected a JSON object");
  const auto it = value.find(name);
  const std::string child = path.empty() ? name : path + "." + name;
  if (it == value.end()) fail("{}: missing field \"{}\"", file.string(), child);
  return {*it, file, child};
}

bool Node::has(const std::string& name) const {
  return value.is_object() && value.contains(name) && !value.at(name).is_null();
}

Node Node::at(std::size_t index) const { return {array().at(index), file, fmt::format("{}[{}]", path, index)}; }

std::string Node::string() const {
  if (!value.is_string()) fail_here("expected a string");
  return value.get<std::string>();
}

std::int64_t Node::integer() const {
  if (!value.is_number_integer()) fail_here("expected an integer");
  return value.get<std::int64_t>();
}

bool Node::boolean() const {
  if (!value.is_boolean()) fail_here("expected true or false");
  return value.get<bool>();
}

const json& Node::array() const {
  if (!value.is_array()) fail_here("expected an array");
  return value;
}

std::string Node::type() const { return at("type").string(); }

void Node::unsupported_type() const { at("type").fail_here(fmt::format("unsupported type \"{}\"", type())); }

}  // namespace kvbench::tokenizer_json
