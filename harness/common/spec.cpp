#include "common/spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>

#include "common/error.h"

namespace kvbench {

SpecItems::SpecItems(std::string context, std::vector<std::pair<std::string, std::string>> items)
    : context_(std::move(context)), items_(std::move(items)) {}

std::optional<std::string> SpecItems::text(const std::string& key) const {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
  for (const auto& [given, value] : items_)
    if (given == key) return value;
  return std::nullopt;
}

int64_t SpecItems::integer(const std::string& key, int64_t fallback, int64_t min, int64_t max) const {
  const std::optional<std::string> value = text(key);
  if (!value) return fallback;
  int64_t number = 0;
  try {
    size_t used = 0;
    number = std::stoll(*value, &used);
    if (used != value->size()) throw std::invalid_argument(*value);
  } catch (const std::exception&) {
    fail("{}: {} must be a whole number (got \"{}\")", context_, key, *value);
  }
  if (number < min || number > max) fail("{}: {} must be in {}..{} (got {})", context_, key, min, max, number);
  return number;
}

void SpecItems::check_all_read() const {
  for (const auto& [key, value] : items_)
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
      if (known_.empty()) fail("{}: unknown key \"{}\" (it takes no settings)", context_, key);
      fail("{}: unknown key \"{}\" ({})", context_, key, fmt::join(known_, ", "));
    }
}

Spec parse_spec(const std::string& text, const std::string& kind) {
  const size_t colon = text.find(':');
  const std::string context = fmt::format("{} spec \"{}\"", kind, text);
  std::vector<std::pair<std::string, std::string>> items;
  std::istringstream listed(colon == std::string::npos ? "" : text.substr(colon + 1));
  for (std::string item; std::getline(listed, item, ',');) {
    const size_t equals = item.find('=');
    if (equals == std::string::npos) fail("{}: \"{}\" is not key=value", context, item);
    const std::string key = item.substr(0, equals);
    for (const auto& [given, value] : items)
      if (given == key) fail("{}: {} given twice", context, key);
    items.emplace_back(key, item.substr(equals + 1));
  }
  return {text.substr(0, colon), SpecItems(context, std::move(items))};
}

}  // namespace kvbench
