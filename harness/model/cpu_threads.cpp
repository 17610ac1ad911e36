#include "model/cpu_threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <sched.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include <algorithm>

namespace kvbench {

namespace {

// libtorch's default pool size (OMP_NUM_THREADS, or one thread per core by cpuinfo), read before
// kvbench first changes it.
int libtorch_default_threads() {
  static const int threads = at::get_num_threads();
  return threads;
}

int read_int(const std::string& path) {
  std::ifstream in(path);
  int value = -1;
  in >> value;
  return in ? value : -1;
}

// Cores this process may run on, as the kernel's topology counts them (distinct package and core ids
// of the allowed CPUs); 0 where sysfs does not say. Preferred to cpuinfo's count, which reads CPUID
// alone: on 2 vCPUs of an AMD EPYC guest that the kernel lists as two cores it counted one, and
// capping GEMMs at that one thread halved prefill (GEMM 107 GFLOP/s at 1 thread, 208 at 2).
int kernel_core_count() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return 0;
  std::set<std::pair<int, int>> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    const std::string topology = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    const int package = read_int(topology + "physical_package_id"), core = read_int(topology + "core_id");
    if (package < 0 || core < 0) return 0;
    cores.emplace(package, core);
  }
  return int(cores.size());
}

int physical_cores() {
  static const int cores = [] {
    if (std::getenv("OMP_NUM_THREADS")) return libtorch_default_threads();  // the user's count
    const int kernel_cores = kernel_core_count();
    return kernel_cores > 0 ? kernel_cores : libtorch_default_threads();
  }();
  return cores;
}

void single_threaded_blas() {
  using SetThreads = void (*)(int);
  if (auto openblas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) openblas(1);
}

}  // namespace

void set_cpu_threads(int threads) {
  libtorch_default_threads();
  at::set_num_threads(threads);
  single_threaded_blas();
}

std::string blas_kernels() {
  using Corename = char* (*)();
  const auto corename = reinterpret_cast<Corename>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  return corename ? std::string("OpenBLAS ") + corename() : std::string();
}

int default_cpu_threads() {
  if (std::getenv("OMP_NUM_THREADS")) return physical_cores();
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return physical_cores();
  return std::max(physical_cores(), CPU_COUNT(&allowed));
}

int compute_threads() { return std::max(1, std::min(at::get_num_threads(), physical_cores())); }

}  // namespace kvbench
