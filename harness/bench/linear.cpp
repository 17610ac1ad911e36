// bench linear: kvbench::linear against at::linear per row count.
#include <ATen/Parallel.h>

#include "engine/machine_rates.h"
#include "model/cpu_threads.h"
#include "model/huge_pages.h"
#include "model/linear.h"
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/bench.h"
#include "bench/measure.h"

namespace kvbench::bench {

// kvbench::linear against at::linear for M rows × [N, K] weights: the evidence for kSmallRows. Cold: each
// repeat runs the product once per copy of the weight, the copies spanning ≥ 1 GiB, so every weight comes
// from memory as in a decode step (one product's warm-cache rate overstates it several times over).
void run_linear(const LinearBench& o, std::ostream& out) {
  const at::ScalarType dtype = parse_dtype(o.dtype);
  // In huge pages, as a model's weights (model/huge_pages.h).
  HugePageArena arena;
  const at::Tensor weight = arena.copy_of(at::randn({o.N, o.K}), at::kCPU, dtype);
  const int64_t copies = o.cold ? std::max<int64_t>(1, (int64_t{1} << 30) / std::max<int64_t>(1, weight.nbytes())) : 1;
  std::vector<at::Tensor> weights{weight};
  while (static_cast<int64_t>(weights.size()) < copies) weights.push_back(arena.copy_of(weight, at::kCPU, dtype));
  const double weight_bytes = static_cast<double>(weight.nbytes());
  out << fmt::format("weight [{}, {}] {}, {} threads ({} for BLAS blocks); GB/s = weight bytes / time\n", o.N,
                           o.K, o.dtype, at::get_num_threads(), compute_threads());
  const MachineRates rates = measure_machine_rates(at::kCPU, dtype);
  out << fmt::format("machine: {} GEMM {:.1f} GFLOP/s (% GEMM: of this rate)\n", dtype_name(dtype), rates.gemm_gflops);
  if (o.cold)
    out << fmt::format("cold: {} copies of the weight ({:.0f} MiB) in turn; read bandwidth {:.1f} GB/s\n", copies,
                             copies * weight_bytes / (1 << 20), rates.read_gbps);
  const auto rate = [&](double seconds, double flops) {
    return fmt::format("{:>7.1f} GB/s {:>6.1f} GFLOP/s {:>4.0f}%", weight_bytes / seconds / 1e9, flops / seconds / 1e9,
                       100.0 * flops / seconds / 1e9 / rates.gemm_gflops);
  };
  out << fmt::format("{:>5}  {:>28}  {:>28}\n", "rows", "kvbench::linear", "at::linear");
  for (int64_t M : o.rows) {
    const at::Tensor x = at::randn({M, o.K}).to(dtype);
    const double flops = 2.0 * M * o.N * o.K;
    const auto seconds_per_product = [&](auto&& product) {
      return median_seconds(o.repeats, [&] {
        for (const at::Tensor& w : weights) product(w);
      }) / static_cast<double>(copies);
    };
    const double ours = seconds_per_product([&](const at::Tensor& w) { kvbench::linear(x, w); });
    std::string theirs = "not implemented";
    if (aten_matmul_supported(x.options()))
      theirs = rate(seconds_per_product([&](const at::Tensor& w) { at::linear(x, w); }), flops);
    out << fmt::format("{:>5}  {}  {:>28}\n", M, rate(ours, flops), theirs);
  }
}

}  // namespace kvbench::bench
