// The allocators, one line each in KVBENCH_ALLOCATORS: `X(id)` is the allocator that
// engine/allocators/<id>.cpp makes with make_<id>_allocator(). A list rather than self-registering
// objects: the core is a static library, and its linker drops object files nothing refers to.
#include <fmt/ranges.h>

#include <memory>

#include "common/error.h"
#include "engine/allocator.h"

#define KVBENCH_ALLOCATORS(X) \
  X(uniform)                  \
  X(pyramid)                  \
  X(ada)                      \
  /* (one line each, ending in a backslash, before this one) */

namespace kvbench {

#define KVBENCH_DECLARE_ALLOCATOR(id) std::unique_ptr<Allocator> make_##id##_allocator();
KVBENCH_ALLOCATORS(KVBENCH_DECLARE_ALLOCATOR)
#undef KVBENCH_DECLARE_ALLOCATOR

namespace {
const std::vector<std::unique_ptr<Allocator>>& registered() {
  static const std::vector<std::unique_ptr<Allocator>> all = [] {
    std::vector<std::unique_ptr<Allocator>> made;
#define KVBENCH_MAKE_ALLOCATOR(id) made.push_back(make_##id##_allocator());
    KVBENCH_ALLOCATORS(KVBENCH_MAKE_ALLOCATOR)
#undef KVBENCH_MAKE_ALLOCATOR
    return made;
  }();
  return all;
}
}  // namespace

const Allocator& find_allocator(const std::string& name) {
  for (const auto& allocator : registered())
    if (allocator->name() == name) return *allocator;
  fail("allocator must be {} (got \"{}\")", fmt::join(allocator_names(), ", "), name);
}

std::vector<std::string> allocator_names() {
  std::vector<std::string> names;
  for (const auto& allocator : registered()) names.push_back(allocator->name());
  return names;
}

}  // namespace kvbench
