#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "common/error.h"

namespace kvbench {

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

Interval bootstrap_ci(const std::vector<double>& values, uint64_t seed, int resamples) {
  if (values.empty()) return {};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
  std::vector<double> means(resamples);
  for (double& m : means) {
    double sum = 0.0;
    for (size_t i = 0; i < values.size(); ++i) sum += values[pick(rng)];
    m = sum / static_cast<double>(values.size());
  }
  std::sort(means.begin(), means.end());
  auto at = [&](double q) { return means[static_cast<size_t>(std::floor(q * (resamples - 1)))]; };
  return {at(0.025), at(0.975)};
}

double sign_test_p_value(int64_t k, int64_t n) {
  if (n == 0) return 1.0;
  const int64_t extreme = std::min(k, n - k);
  double tail = 0.0;  // P(X ≤ extreme), summed in log space to stay finite for large n
  for (int64_t i = 0; i <= extreme; ++i)
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  return std::min(1.0, 2.0 * tail);
}

PairedComparison compare_paired(const std::vector<double>& a, const std::vector<double>& b, uint64_t seed) {
  if (a.size() != b.size()) fail("paired comparison needs equal lengths ({} vs {})", a.size(), b.size());
  PairedComparison result;
  std::vector<double> differences;
  for (size_t i = 0; i < a.size(); ++i) {
    differences.push_back(a[i] - b[i]);
    result.a_better += a[i] > b[i];
    result.b_better += b[i] > a[i];
  }
  result.pairs = static_cast<int64_t>(a.size());
  result.mean_difference = mean(differences);
  result.difference_ci = bootstrap_ci(differences, seed);
  result.sign_test_p = sign_test_p_value(result.a_better, result.a_better + result.b_better);
  return result;
}

}  // namespace kvbench
