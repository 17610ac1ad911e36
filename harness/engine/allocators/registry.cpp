// The allocators, one line each in KVBENCH_ALLOCATORS: `X("name", id)` is the allocator that
// engine/allocators/<id>.cpp makes with make_<id>_allocator(const SpecItems& knobs). A list rather than
// self-registering objects: the core is a static library, and its linker drops object files nothing refers to.
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "common/error.h"
#include "common/spec.h"
#include "engine/allocator.h"

#define KVBENCH_ALLOCATORS(X) \
  X("uniform", uniform)       \
  X("pyramid", pyramid)       \
  X("ada", ada)               \
  X("chunkkv", chunkkv)       \
  X("duo", duo)               \
  X("global", global)         \
  X("chunk", chunk)           \
  X("dms", dms)               \
  X("layers", layers)         \
  X("critical", critical)     \
  /* (one line each, ending in a backslash, before this one) */

namespace kvbench {

#define KVBENCH_DECLARE_ALLOCATOR(name, id) std::unique_ptr<Allocator> make_##id##_allocator(const SpecItems&);
KVBENCH_ALLOCATORS(KVBENCH_DECLARE_ALLOCATOR)
#undef KVBENCH_DECLARE_ALLOCATOR

namespace {
using AllocatorFactory = std::unique_ptr<Allocator> (*)(const SpecItems&);

const std::vector<std::pair<std::string, AllocatorFactory>>& factories() {
#define KVBENCH_ALLOCATOR_ENTRY(name, id) {name, make_##id##_allocator},
  static const std::vector<std::pair<std::string, AllocatorFactory>> table = {KVBENCH_ALLOCATORS(KVBENCH_ALLOCATOR_ENTRY)};
#undef KVBENCH_ALLOCATOR_ENTRY
  return table;
}
}  // namespace

// Refreshes look their allocator up by spec, so each spec is made (and its knobs checked) once.
const Allocator& find_allocator(const std::string& spec) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Allocator>> made;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = made.find(spec); it != made.end()) return *it->second;
  const Spec parsed = parse_spec(spec, "allocator");
  const auto factory = std::find_if(factories().begin(), factories().end(),
                                    [&](const auto& entry) { return entry.first == parsed.name; });
  if (factory == factories().end())
    fail("allocator must be {} (got \"{}\")", fmt::join(allocator_names(), ", "), parsed.name);
  std::unique_ptr<Allocator> allocator = factory->second(parsed.items);
  parsed.items.check_all_read();
  allocator->spec_ = parsed.items.normal_form(parsed.name);
  allocator->knob_settings_ = parsed.items.settings();
  return *made.emplace(spec, std::move(allocator)).first->second;
}

std::vector<std::string> allocator_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

}  // namespace kvbench
