#include "engine/cpu_threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

namespace kvbench {

void set_cpu_threads(int threads) {
  at::set_num_threads(threads);
  using SetThreads = void (*)(int);
  if (auto openblas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) openblas(threads);
}

}  // namespace kvbench
