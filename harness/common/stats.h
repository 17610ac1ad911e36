// Statistics for reports: seeded percentile-bootstrap CIs and paired comparisons of two policies on the
// same samples and seeds. Seeded so that a report is reproducible to the last digit.
#pragma once
#include <cstdint>
#include <vector>

namespace kvbench {

struct Interval {
  double low = 0.0, high = 0.0;
};

double mean(const std::vector<double>& values);

// 95% percentile bootstrap CI of the mean (resampling the values with replacement).
Interval bootstrap_ci(const std::vector<double>& values, uint64_t seed = 0, int resamples = 2000);

struct PairedComparison {
  int64_t pairs = 0;
  double mean_difference = 0.0;  // mean(a − b)
  Interval difference_ci;        // paired bootstrap (resampling pairs)
  int64_t a_better = 0, b_better = 0;
  double sign_test_p = 1.0;      // exact two-sided sign test on the non-tied pairs
};

// a[i] and b[i] belong to the same sample (and seed).
PairedComparison compare_paired(const std::vector<double>& a, const std::vector<double>& b, uint64_t seed = 0);

// Exact two-sided binomial(n, 1/2) p-value of observing k or a more extreme count.
double sign_test_p_value(int64_t k, int64_t n);

}  // namespace kvbench
