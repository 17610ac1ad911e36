// "name:key=value,key=value" specs: one parser for everything a user names together with its settings in
// one string — a policy and its knobs (--policy snapkv:window=32,kernel=7), a generated task's data
// (--data rare-fact:seed=0,samples=10) — so they read and fail alike.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbench {

// The key=value items of a spec, read by key by whatever owns them (a policy's factory, a task). Each
// read marks its key as known; check_all_read() then refuses the keys nobody read (a typo, another
// policy's knob), naming the known ones. Errors name the whole spec.
class SpecItems {
 public:
  SpecItems() = default;
  SpecItems(std::string context, std::vector<std::pair<std::string, std::string>> items);
  // The value given for `key`, if any.
  std::optional<std::string> text(const std::string& key) const;
  // The value as a whole number in [min, max], `fallback` when not given; kvbench::Error otherwise.
  int64_t integer(const std::string& key, int64_t fallback, int64_t min, int64_t max) const;
  void check_all_read() const;
  // Every key=value as given (reading them through text() marks them read).
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }
  // e.g. `policy spec "snapkv:window=32"`: what error messages start with.
  const std::string& context() const { return context_; }

 private:
  std::string context_;
  std::vector<std::pair<std::string, std::string>> items_;
  mutable std::vector<std::string> known_;  // keys read so far, in reading order
};

struct Spec {
  std::string name;
  SpecItems items;
};

// Splits "name" or "name:key=value,…"; `kind` names the spec in errors ("policy", "rare-fact"). Throws
// kvbench::Error for an item that is not key=value or a key given twice.
Spec parse_spec(const std::string& text, const std::string& kind);

}  // namespace kvbench
