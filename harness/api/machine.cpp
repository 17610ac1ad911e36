#include "api/machine.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <malloc.h>
#include <torch/version.h>

#include <thread>

#include "common/build_info.h"
#include "model/cpu_threads.h"
#include "model/linear.h"
#include "model/linear_kernels.h"
#include "model/model.h"

namespace kvbench::api {

std::string build_description() {
  const char* cuda = KVBENCH_CUDA ? "compiled in" : "not compiled in";
  return fmt::format("kvbench {} (commit {}), libtorch {}, CUDA {}, {} CUDA device(s) visible", KVBENCH_VERSION,
                     git_commit(), TORCH_VERSION, cuda, cuda_device_count());
}

void set_threads(int threads) { set_cpu_threads(threads > 0 ? threads : default_cpu_threads()); }

void tune_allocator() {
  // Large temporaries (a long cache's attention scores: 67 MiB a block at n = 65536) are reused from the
  // heap, not mapped and unmapped each time: glibc maps anything over 32 MiB afresh, and zeroing its new
  // pages took half of a counter-causal pass at n = 65536 (page faults and memset in the profile). The
  // cost: up to 1 GiB freed at the top of the heap stays with the process (bench refresh trims it itself).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

std::vector<std::pair<std::string, std::string>> machine_facts() {
  const auto yes = [](bool b) -> std::string { return b ? "yes" : "no"; };
  return {{"libtorch", TORCH_VERSION},
          {"CUDA path compiled in", yes(KVBENCH_CUDA)},
          {"CUDA devices visible", std::to_string(cuda_device_count())},
          {"CPU threads (pool)", std::to_string(at::get_num_threads())},
          {"logical CPUs", std::to_string(std::thread::hardware_concurrency())},
          {"AVX2 kernels (kvbench)", yes(linear_detail::cpu_has_avx2_kernel())},
          {"bfloat16 GEMM (oneDNN)", yes(linear_detail::hardware_gemm(at::kBFloat16))},
          {"float16 GEMM (oneDNN)", yes(linear_detail::hardware_gemm(at::kHalf))},
          {"BLAS kernels", blas_kernels().empty() ? "not OpenBLAS" : blas_kernels()},
          {"MKL / oneDNN (libtorch)", fmt::format("{} / {}", yes(at::hasMKL()), yes(at::hasMKLDNN()))}};
}

std::string torch_build_config() { return at::show_config(); }

}  // namespace kvbench::api
