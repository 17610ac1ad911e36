// What the benchmarks share: random prompts, the work a token costs, medians and timings, memory readings.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "api/kvbench.h"

namespace kvbench::bench {

std::vector<int64_t> random_ids(int64_t count, int64_t vocab, uint64_t seed);
// One line: the model's shape, device, dtype and threads.
std::string describe(const api::ModelSource& source, const Model& model);
// A memory figure of this process (kB) from /proc/self/status: "VmRSS:" resident now, "VmHWM:" its peak.
int64_t status_kb(const std::string& field);

// What one token costs: bytes a decode step reads and FLOPs a prefill token computes.
struct TokenCosts {
  double weight_bytes = 0;  // every layer's projections and norms, the final norm and the LM head (one
                            // embedding row, a few kB, is left out)
  double kv_bytes_per_entry = 0;  // K and V of one cache entry, all layers
  double layer_params = 0, head_params = 0;
};
TokenCosts token_costs(const Model& model);
// Prefill FLOPs of a T-token prompt (see measure.cpp for what is counted).
double prefill_flops(const Model& model, const TokenCosts& costs, int64_t T);
// FLOPs of one decode token: every linear layer's multiply-adds (the LM head included) and attention's two
// products (scores and weighted values) over `cache` entries per head.
double decode_flops(const Model& model, double cache);

double median(std::vector<double> values);

// Median seconds of `work` over `repeats` runs after one warm-up.
template <typename Work>
double median_seconds(int64_t repeats, Work&& work) {
  work();
  std::vector<double> seconds;
  for (int64_t r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    work();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return median(seconds);
}

}  // namespace kvbench::bench
