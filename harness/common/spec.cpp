#include "common/spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "common/error.h"

namespace kvbench {

SpecItems::SpecItems(std::string context, std::vector<std::pair<std::string, std::string>> items)
    : context_(std::move(context)), items_(std::move(items)) {}

namespace {
std::optional<std::string> given_value(const std::vector<std::pair<std::string, std::string>>& items,
                                       const std::string& key) {
  for (const auto& [given, value] : items)
    if (given == key) return value;
  return std::nullopt;
}
}  // namespace

void SpecItems::take(const std::string& key, nlohmann::json value, bool is_default) const {
  for (const Knob& knob : taken_)
    if (knob.key == key) return;
  taken_.push_back({key, std::move(value), is_default});
}

void SpecItems::refuse(const std::string& key, const std::string& expected, const std::string& given) const {
  fail("{}: {} must be {} (got \"{}\")", context_, key, expected, given);
}

std::optional<std::string> SpecItems::raw(const std::string& key) const {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
  return given_value(items_, key);
}

std::optional<std::string> SpecItems::text(const std::string& key) const {
  const std::optional<std::string> value = raw(key);
  if (value) take(key, *value, false);
  return value;
}

template <class T>
T SpecItems::read(const std::string& key, T fallback, const std::string& expected,
                  const std::function<std::optional<T>(const std::string&)>& parse) const {
  const std::optional<std::string> value = raw(key);
  if (!value) {
    take(key, fallback, true);
    return fallback;
  }
  const std::optional<T> parsed = parse(*value);
  if (!parsed) refuse(key, expected, *value);
  take(key, *parsed, *parsed == fallback);
  return *parsed;
}

namespace {
// `text` as a whole T by `convert` (std::stoll, std::stod), or nullopt when it is not one, in full.
template <class T>
std::optional<T> parsed_in_full(const std::string& text, T (*convert)(const std::string&, size_t*)) {
  try {
    size_t used = 0;
    const T value = convert(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

long long to_whole(const std::string& text, size_t* used) { return std::stoll(text, used); }
double to_real(const std::string& text, size_t* used) { return std::stod(text, used); }
}  // namespace

int64_t SpecItems::integer(const std::string& key, int64_t fallback, int64_t min, int64_t max) const {
  return read<int64_t>(key, fallback, fmt::format("a whole number in {}..{}", min, max),
                       [&](const std::string& text) -> std::optional<int64_t> {
                         const auto value = parsed_in_full<long long>(text, to_whole);
                         if (value && *value >= min && *value <= max) return *value;
                         return std::nullopt;
                       });
}

double SpecItems::number(const std::string& key, double fallback, double min, double max) const {
  return read<double>(key, fallback, fmt::format("a number in {:g}..{:g}", min, max),
                      [&](const std::string& text) -> std::optional<double> {
                        const auto value = parsed_in_full<double>(text, to_real);
                        if (value && std::isfinite(*value) && *value >= min && *value <= max) return *value;
                        return std::nullopt;
                      });
}

bool SpecItems::boolean(const std::string& key, bool fallback) const {
  return read<bool>(key, fallback, "a boolean (true, false, 1 or 0)", [](const std::string& text) -> std::optional<bool> {
    if (text == "true" || text == "1") return true;
    if (text == "false" || text == "0") return false;
    return std::nullopt;
  });
}

std::string SpecItems::string(const std::string& key, const std::string& fallback) const {
  return read<std::string>(key, fallback, "a text", [](const std::string& text) { return std::optional(text); });
}

std::string SpecItems::choice(const std::string& key, const std::string& fallback,
                              const std::vector<std::string>& choices) const {
  return read<std::string>(key, fallback, fmt::format("one of {}", fmt::join(choices, ", ")),
                           [&](const std::string& text) -> std::optional<std::string> {
                             if (std::find(choices.begin(), choices.end(), text) == choices.end()) return std::nullopt;
                             return text;
                           });
}

std::vector<double> number_list(const std::string& text, char separator, double min, double max,
                                const std::string& what) {
  std::vector<double> numbers;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, separator);) {
    const auto value = parsed_in_full<double>(item, to_real);
    if (!value || !(*value >= min && *value <= max))
      fail("{} must be numbers in {:g}..{:g} joined by '{}' (got \"{}\")", what, min, max, separator, item);
    numbers.push_back(*value);
  }
  return numbers;
}

std::string knob_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  return value.dump();
}

std::string SpecItems::normal_form(const std::string& name) const {
  std::vector<std::string> changed;
  for (const Knob& knob : taken_)
    if (!knob.is_default) changed.push_back(knob.key + "=" + knob_text(knob.value));
  return changed.empty() ? name : fmt::format("{}:{}", name, fmt::join(changed, ","));
}

nlohmann::json SpecItems::settings() const {
  nlohmann::json out = nlohmann::json::object();
  for (const Knob& knob : taken_) out[knob.key] = knob.value;
  return out;
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
