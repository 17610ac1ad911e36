#include "engine/cpu_threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <sched.h>

#include <cstdlib>

#include <algorithm>

namespace kvbench {

namespace {

// libtorch's default pool size (one thread per physical core, from cpuinfo, or OMP_NUM_THREADS), read
// before kvbench first changes it.
int physical_cores() {
  static const int cores = at::get_num_threads();
  return cores;
}

void single_threaded_blas() {
  using SetThreads = void (*)(int);
  if (auto openblas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) openblas(1);
}

}  // namespace

void set_cpu_threads(int threads) {
  physical_cores();
  at::set_num_threads(threads);
  single_threaded_blas();
}

int default_cpu_threads() {
  if (std::getenv("OMP_NUM_THREADS")) return physical_cores();  // libtorch's count honours it
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return physical_cores();
  return std::max(physical_cores(), CPU_COUNT(&allowed));
}

int compute_threads() { return std::max(1, std::min(at::get_num_threads(), physical_cores())); }

}  // namespace kvbench
