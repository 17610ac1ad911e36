// "name:key=value,key=value" specs: one parser for everything a user names together with its settings in
// one string — a policy and its knobs (--policy snapkv:window=32,kernel=7), a generated task's data
// (--data rare-fact:seed=0,samples=10) — so they read and fail alike.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbench {

// The key=value items of a spec, read by key by whatever owns them (a policy's or allocator's factory, a
// task). Each read marks its key as known; check_all_read() then refuses the keys nobody read (a typo,
// another policy's knob), naming the known ones. Errors name the whole spec, the knob, its type and range.
//
// The typed reads also record the value each knob takes, default or given, so one experiment has one
// text: normal_form() writes the knobs that differ from their defaults, in reading order and canonical
// spelling ("h2o:recent_percent=50" and "h2o" are both "h2o"), and settings() lists every knob's value.
class SpecItems {
 public:
  SpecItems() = default;
  SpecItems(std::string context, std::vector<std::pair<std::string, std::string>> items);
  // The value given for `key`, if any (a knob without a default: always part of the normal form).
  std::optional<std::string> text(const std::string& key) const;
  // The value as a whole number in [min, max], `fallback` when not given; kvbench::Error otherwise.
  int64_t integer(const std::string& key, int64_t fallback, int64_t min, int64_t max) const;
  // The value as a finite number in [min, max], `fallback` when not given.
  double number(const std::string& key, double fallback, double min, double max) const;
  // true/false (or 1/0), `fallback` when not given.
  bool boolean(const std::string& key, bool fallback) const;
  // Any text (a file path), `fallback` when not given.
  std::string string(const std::string& key, const std::string& fallback) const;
  // One of `choices`, `fallback` when not given.
  std::string choice(const std::string& key, const std::string& fallback, const std::vector<std::string>& choices) const;
  void check_all_read() const;
  // `name` with the knobs read whose values differ from their defaults: "name" or "name:key=value,…".
  std::string normal_form(const std::string& name) const;
  // Every knob read, with the value it takes (defaults filled in): {"window": 64, "kernel": 5}.
  nlohmann::json settings() const;
  // Every key=value as given (reading them through text() marks them read).
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }
  // e.g. `policy spec "snapkv:window=32"`: what error messages start with.
  const std::string& context() const { return context_; }

 private:
  struct Knob {
    std::string key;
    nlohmann::json value;
    bool is_default = false;
  };
  // The value of `key` as `parse` reads it (nullopt: not a valid value, refused naming `expected`), or
  // `fallback` when not given; records what the knob takes.
  template <class T>
  T read(const std::string& key, T fallback, const std::string& expected,
         const std::function<std::optional<T>(const std::string&)>& parse) const;
  // The value given for `key`, marking it known.
  std::optional<std::string> raw(const std::string& key) const;
  // Records what `key` takes (the first read of a key counts).
  void take(const std::string& key, nlohmann::json value, bool is_default) const;
  [[noreturn]] void refuse(const std::string& key, const std::string& expected, const std::string& given) const;

  std::string context_;
  std::vector<std::pair<std::string, std::string>> items_;
  mutable std::vector<std::string> known_;  // keys read so far, in reading order
  mutable std::vector<Knob> taken_;         // the values they take, in reading order
};

// A knob's value as a spec writes it: text as is, numbers shortest (3, not 3.0), booleans true/false.
std::string knob_text(const nlohmann::json& value);

// The numbers of a knob's value that lists several, joined by `separator` ("0.25+0.5", "0.2/0.8"), each in
// [min, max]; kvbench::Error "<what> must be numbers in min..max joined by '<separator>'" naming the item that is not.
std::vector<double> number_list(const std::string& text, char separator, double min, double max,
                                const std::string& what);

struct Spec {
  std::string name;
  SpecItems items;
};

// Splits "name" or "name:key=value,…"; `kind` names the spec in errors ("policy", "rare-fact"). Throws
// kvbench::Error for an item that is not key=value or a key given twice.
Spec parse_spec(const std::string& text, const std::string& kind);

}  // namespace kvbench
