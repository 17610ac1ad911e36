#include "engine/machine_rates.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "model/huge_pages.h"
#include "model/linear.h"
#include "model/model.h"

namespace kvbench {

namespace {

// Best (shortest) wall time of `work` over `rounds` runs, after one warm-up; a copy to the CPU waits for
// the device.
template <typename Work>
double best_seconds(int rounds, Work&& work) {
  work().cpu();
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    work().cpu();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

MachineRates measure_machine_rates(at::Device device, at::ScalarType dtype) {
  const auto options = at::TensorOptions().device(device).dtype(dtype);
  MachineRates rates;
  // GEMM: [n, n] × [n, n], large enough that packing and threading overheads vanish.
  const int64_t n = device.is_cpu() ? 1536 : 8192;
  const at::Tensor a = at::randn({n, n}, options), b = at::randn({n, n}, options);
  // The faster of libtorch's product and kvbench::linear's (BLAS split over libtorch's pool, as a
  // single-threaded BLAS needs: model/cpu_threads.h); ours alone where ATen has none (CPU float16).
  const double mm = aten_matmul_supported(options) ? best_seconds(3, [&] { return at::mm(a, b).sum(); }) : HUGE_VAL;
  const double ours = best_seconds(3, [&] { return kvbench::linear(a, b).sum(); });
  rates.gemm_gflops = 2.0 * n * n * n / std::min(mm, ours) / 1e9;
  const MachineRates read = ReadBandwidthProbe(device).measure(3);
  rates.read_gbps = read.read_gbps;
  rates.gemv_gbps = read.gemv_gbps;
  return rates;
}

// 1 GiB of float32 (2^28 elements), far past every cache; on the CPU in huge pages, as a model's weights.
ReadBandwidthProbe::ReadBandwidthProbe(at::Device device) {
  const int64_t rows = 16384, cols = (int64_t{1} << 28) / rows;
  const auto options = at::TensorOptions().device(device).dtype(at::kFloat);
  matrix_ = device.is_cpu() ? HugePageArena().empty({rows, cols}, at::kFloat).uniform_() : at::rand({rows, cols}, options);
  vector_ = at::rand({cols}, options);
}

// The fastest of three readers: our own one-row product streams the matrix faster than libtorch's on some CPUs.
MachineRates ReadBandwidthProbe::measure(int rounds) const {
  const double bytes = static_cast<double>(matrix_.numel()) * 4.0;
  const double gemv = best_seconds(rounds, [&] { return at::mv(matrix_, vector_); });
  const double sum = best_seconds(rounds, [&] { return matrix_.sum(); });
  const double gemv_ours = best_seconds(rounds, [&] { return kvbench::linear(vector_.unsqueeze(0), matrix_); });
  MachineRates rates;
  rates.read_gbps = bytes / std::min({gemv, sum, gemv_ours}) / 1e9;
  rates.gemv_gbps = bytes / std::min(gemv, gemv_ours) / 1e9;
  return rates;
}

MachineRates best_of(const MachineRates& a, const MachineRates& b) {
  return {std::max(a.gemm_gflops, b.gemm_gflops), std::max(a.read_gbps, b.read_gbps), std::max(a.gemv_gbps, b.gemv_gbps)};
}

}  // namespace kvbench
