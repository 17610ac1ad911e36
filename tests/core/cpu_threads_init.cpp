// The core tests run with the same CPU threads as kvbench itself: libtorch's default, BLAS aligned to it
// (engine/cpu_threads.h), so no idle BLAS worker spins beside the tests.
#include <ATen/Parallel.h>

#include "engine/cpu_threads.h"

namespace {
const bool aligned = [] {
  kvbench::set_cpu_threads(at::get_num_threads());
  return true;
}();
}  // namespace
