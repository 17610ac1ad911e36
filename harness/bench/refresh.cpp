// bench refresh: one refresh's scoring latency, work and memory vs cache size n.
#include <malloc.h>

#include <cmath>
#include <fstream>

#include "bench/resampled_cache.h"
#include "engine/machine_rates.h"
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/bench.h"
#include "bench/measure.h"

namespace kvbench::bench {

namespace {

// Restarts the peak-RSS count (VmHWM) so the next reading is the peak of what follows; false where the
// kernel refuses, and the reading is then the process's peak so far.
bool reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  return static_cast<bool>(clear_refs << "5" << std::flush);
}

// Median wall time (ms) of one refresh's scoring over `cache`, after `warmups` untimed runs.
double median_scoring_ms(const Model& model, Policy& policy, const KvCache& cache, const RefreshBench& o) {
  CacheBudget budget;
  budget.J = cache.size() / 2;
  budget.min_gap = o.min_gap;
  std::vector<double> ms;
  for (int64_t r = 0; r < o.warmups + o.repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    policy.score({model, cache, budget}).cpu();  // the copy waits for the device
    const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r >= o.warmups) ms.push_back(elapsed);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The exponent a of y ≈ c·x^a: least-squares slope of log y on log x over the points with y > 0 (NaN
// with fewer than two distinct x).
double loglog_exponent(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<std::pair<double, double>> points;
  for (size_t i = 0; i < x.size(); ++i)
    if (y[i] > 0) points.emplace_back(std::log(x[i]), std::log(y[i]));
  double mx = 0, my = 0;
  for (const auto& [lx, ly] : points) mx += lx, my += ly;
  mx /= points.size(), my /= points.size();
  double sxy = 0, sxx = 0;
  for (const auto& [lx, ly] : points) sxy += (lx - mx) * (ly - my), sxx += (lx - mx) * (lx - mx);
  return points.size() >= 2 && sxx > 0 ? sxy / sxx : NAN;
}

// A cache of n entries whose scoring takes as long as on n real tokens, built in O(n) (bench/resampled_cache.h):
// a prefill of min(n, 512) random tokens, as it is for n ≤ 512, resampled to n entries above.
KvCache filled_cache(const Model& model, int64_t n) {
  constexpr int64_t kPrefillTokens = 512;
  const int64_t count = std::min(n, kPrefillTokens);
  KvCache prefilled(cache_shape(model.config()), 1, model.options(), true);
  const auto device = model.options().device();
  model.forward(at::tensor(random_ids(count, model.config().vocab_size, n)).unsqueeze(0).to(device),
                at::arange(count, at::kLong).unsqueeze(0).to(device), prefilled);
  return n == count ? std::move(prefilled) : resampled_cache(model, prefilled, n, n);
}

// One round: the machine's GEMM rate, then for each n its cache, filled just before its policies are
// measured and dropped after (so the largest n never shares memory with the others), then the fitted exponents.
void refresh_bench_round(std::ostream& out, const RefreshBench& o, const Model& model,
                         std::vector<std::unique_ptr<Policy>>& policies) {
  const MachineRates rates = measure_machine_rates(o.model.parsed_device(), o.model.parsed_dtype());
  out << fmt::format("machine: {} GEMM {:.1f} GFLOP/s, read bandwidth {:.1f} GB/s\n",
                           dtype_name(o.model.parsed_dtype()), rates.gemm_gflops, rates.read_gbps)
            << fmt::format("{:>7}  {:<22} {:>10} {:>9} {:>9} {:>7} {:>9} {:>9}\n", "n", "policy", "median ms", "GFLOP",
                           "GFLOP/s", "% GEMM", "peak MiB", "pass MiB");
  const std::vector<double> sizes(o.sizes.begin(), o.sizes.end());
  // [policy][n]
  std::vector<std::vector<double>> ms(policies.size()), peak_mib(policies.size()), pass_mib(policies.size());
  CacheBudget budget;  // what scoring_flops reads of it: min_gap
  budget.min_gap = o.min_gap;
  for (size_t s = 0; s < o.sizes.size(); ++s) {
    const KvCache cache = filled_cache(model, o.sizes[s]);
    for (size_t p = 0; p < policies.size(); ++p) {
      ::malloc_trim(0);  // freed heap goes back first, so the pass's own memory shows as growth above `resident`
      const int64_t resident_kb = status_kb("VmRSS:");
      reset_peak_rss();
      ms[p].push_back(median_scoring_ms(model, *policies[p], cache, o));
      const int64_t peak_kb = status_kb("VmHWM:");
      peak_mib[p].push_back(peak_kb / 1024.0);
      pass_mib[p].push_back((peak_kb - resident_kb) / 1024.0);
      const auto flops = policies[p]->scoring_flops(model.config(), o.sizes[s], budget);
      const double gflops = flops ? *flops / 1e9 : NAN, rate = gflops / (ms[p].back() / 1e3);
      out << fmt::format("{:>7}  {:<22} {:>10.2f} {:>9.1f} {:>9.1f} {:>6.1f}% {:>9.0f} {:>9.1f}\n", o.sizes[s],
                               o.policies[p], ms[p].back(), gflops, rate, 100 * rate / rates.gemm_gflops,
                               peak_mib[p].back(), pass_mib[p].back());
    }
    if (ms.size() == 2)
      out << fmt::format("{:>7}  time ratio {} / {}: {:.2f}x\n", "", o.policies[0], o.policies[1],
                               ms[0].back() / ms[1].back());
    out << std::flush;
  }
  const auto exponent = [&](const std::vector<double>& y) {
    const double a = loglog_exponent(sizes, y);
    return std::isnan(a) ? std::string("– (under two n with a value > 0)") : fmt::format("{:.2f}", a);
  };
  for (size_t p = 0; p < policies.size(); ++p)
    out << fmt::format("fit over n = {}: {} latency ∝ n^{}, peak RSS ∝ n^{}, pass memory ∝ n^{}\n",
                             fmt::join(o.sizes, ","), o.policies[p], exponent(ms[p]), exponent(peak_mib[p]),
                             exponent(pass_mib[p]));
}

}  // namespace

void run_refresh(const RefreshBench& o, std::ostream& out) {
  const Model model = api::load_model(o.model).model;
  out << describe(o.model, model) << "\n";
  std::vector<std::unique_ptr<Policy>> policies;
  for (const auto& name : o.policies) policies.push_back(make_policy(name));
  if (!reset_peak_rss()) out << "(peak RSS cannot be reset here: each figure is the process's peak so far)\n";
  for (int64_t round = 1; round <= o.rounds; ++round) {
    out << fmt::format("round {} of {}, median of {} timed scorings after {} warm-up(s)\n", round, o.rounds,
                             o.repeats, o.warmups);
    refresh_bench_round(out, o, model, policies);
  }
}


}  // namespace kvbench::bench
