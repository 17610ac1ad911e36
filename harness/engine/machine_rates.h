// The machine's own speed limits, measured in the same run as a benchmark so figures are ratios that
// compare across machines (AVX2 vs AVX-512 hosts, 2 vs 16 cores): the dense matrix-product FLOP rate
// and the memory read bandwidth, each with the current thread settings.
#pragma once
#include <ATen/ATen.h>

namespace kvbench {

struct MachineRates {
  double gemm_gflops = 0.0;  // best of a few square products in `dtype` (at::mm, kvbench::linear)
  double read_gbps = 0.0;    // best of a few passes reading a ≥ 1 GiB matrix (at::mv, sum, kvbench::linear)
  double gemv_gbps = 0.0;    // the same, by one-row products alone (at::mv, kvbench::linear)
};

// Each rate's best of a and b: measured before and after a benchmark, the bound a slow moment of a
// shared machine cannot lower.
MachineRates best_of(const MachineRates& a, const MachineRates& b);

// About a second of work on a 2-core CPU; `device` and `dtype` as the benchmark's model.
MachineRates measure_machine_rates(at::Device device, at::ScalarType dtype = at::kFloat);

// The read bandwidth alone, by the same readers over a 1 GiB matrix allocated once, for measuring beside
// each repeat of a benchmark: on a shared machine it moves by half within minutes, so a bound measured
// only before and after a run says little of the moment a repeat ran.
class ReadBandwidthProbe {
 public:
  explicit ReadBandwidthProbe(at::Device device);
  // read_gbps and gemv_gbps (gemm_gflops stays 0), each reader's best of `rounds` passes after a warm-up.
  MachineRates measure(int rounds) const;

 private:
  at::Tensor matrix_, vector_;
};

}  // namespace kvbench
