// A portable deterministic RNG for task generation and option shuffles. std::shuffle and the std
// distributions are implementation-defined, so they would give different samples per standard library.
#pragma once
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace kvbench::tasks {

// FNV-1a 64-bit hash: turns a record id into a seed.
inline std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// SplitMix64 (Steele et al. 2014): tiny, well-mixed, fully specified.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n) for n > 0, by rejection (no modulo bias).
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    std::uint64_t x;
    do x = next();
    while (x >= limit);
    return x % n;
  }

  // Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  template <class T>
  const T& pick(const std::vector<T>& items) { return items[below(items.size())]; }

  // Fisher–Yates, from the last position down.
  template <class T>
  void shuffle(std::vector<T>& items) {
    for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[below(i)]);
  }

 private:
  std::uint64_t state_;
};

}  // namespace kvbench::tasks
