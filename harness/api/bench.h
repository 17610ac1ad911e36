// The benchmarks behind `kvbench bench` (figures for issue notes, not tests): each measures on this machine and
// writes its table to `out`, every speed beside the rate the machine reaches in the same run. Declared here, in
// the façade the CLI may include, and implemented in harness/bench/ (a layer above api); cli/cmd_bench.cpp
// parses their options.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "api/kvbench.h"

namespace kvbench::bench {

// Prefill and decode tokens/s (full cache, greedy, a random prompt) against the GEMM rate and the read
// bandwidth; model.dtype may list several dtypes (comma-separated), timed in turns.
struct DecodeBench {
  api::ModelSource model;
  int64_t prompt_len = 512, new_tokens = 128, repeats = 3;
};
void run_decode(const DecodeBench& o, std::ostream& out);

// kvbench::linear against at::linear for M rows × [N, K] weights.
struct LinearBench {
  std::vector<int64_t> rows = {1, 4, 16, 32, 64, 128};
  int64_t K = 896, N = 4864, repeats = 20;
  std::string dtype = "float32";
  bool cold = false;
};
void run_linear(const LinearBench& o, std::ostream& out);

// Aggregate decode tokens/s of B samples decoded together, against the GEMM rate.
struct ThroughputBench {
  api::ModelSource model;
  JobConfig job;  // the policy and its budget
  std::vector<int64_t> batches = {1, 4, 16, 64};
  int64_t prompt_len = 128, new_tokens = 64, rounds = 2;
};
void run_throughput(const ThroughputBench& o, std::ostream& out);

// Wall time of one fixed job at batch 1 and at a run's default batch.
struct SweepBench {
  api::ModelSource model;
  JobConfig job;
  int64_t samples = 16, batch = 0, rounds = 2;  // batch 0: default_batch
  int64_t decode_prompt = 64, decode_new = 128, prefill_prompt = 1024, prefill_new = 16;
};
void run_sweep(const SweepBench& o, std::ostream& out);

// Refresh scoring latency, work and memory vs cache size n, per policy (any registered policy, Python ones too).
struct RefreshBench {
  api::ModelSource model;
  std::vector<int64_t> sizes = {512, 1024, 2048, 4096};
  std::vector<std::string> policies = {"counter-causal", "counter-causal-fast"};
  int64_t repeats = 5, rounds = 1, min_gap = 0, warmups = 1;
};
void run_refresh(const RefreshBench& o, std::ostream& out);

}  // namespace kvbench::bench
