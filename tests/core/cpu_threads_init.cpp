// CTest runs test processes side by side: BLAS runs single-threaded inside libtorch's pool
// (model/cpu_threads.h), so no idle BLAS worker spins beside the other tests.
#include <ATen/Parallel.h>

#include "model/cpu_threads.h"

namespace {
const bool aligned = [] {
  kvbench::set_cpu_threads(at::get_num_threads());
  return true;
}();
}  // namespace
