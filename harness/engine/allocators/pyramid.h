// PyramidKV's layer budgets (engine/allocators/pyramid.cpp), public for tests and for allocators that
// slope budgets the same way.
#pragma once
#include <cstdint>
#include <vector>

namespace kvbench {

// Budgets B_0 … B_{L−1} falling linearly with B_0 / B_{L−1} = ratio and Σ B_l = L·J (whole_budgets
// rounding); kvbench::Error when the ratio is not finite and ≥ 1, or a budget falls below `minimum`.
std::vector<int64_t> pyramid_budgets(int64_t J, int64_t layers, double ratio, int64_t minimum);

}  // namespace kvbench
