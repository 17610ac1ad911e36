// `kvbench doctor` (and `kvbench --version`): what this binary was built against and what it finds here —
// the libtorch, whether the CUDA path is compiled in and how many GPUs it sees, the CPU kernels, threads.
// The first thing to paste into a bug report, and the way to tell which of the two builds is on PATH.
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/version.h>

#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "common/build_info.h"
#include "model/cpu_threads.h"
#include "model/linear.h"
#include "model/linear_kernels.h"
#include "model/model.h"

namespace kvbench::cli {

std::string build_description() {
  const char* cuda = KVBENCH_CUDA ? "compiled in" : "not compiled in";
  return fmt::format("kvbench {} (commit {}), libtorch {}, CUDA {}, {} CUDA device(s) visible", KVBENCH_VERSION,
                     git_commit(), TORCH_VERSION, cuda, cuda_device_count());
}

namespace {

void print_doctor() {
  const auto yes = [](bool b) { return b ? "yes" : "no"; };
  std::cout << build_description() << "\n\n";
  std::cout << fmt::format("{:<26}{}\n", "libtorch", TORCH_VERSION)
            << fmt::format("{:<26}{}\n", "CUDA path compiled in", yes(KVBENCH_CUDA))
            << fmt::format("{:<26}{}\n", "CUDA devices visible", cuda_device_count())
            << fmt::format("{:<26}{}\n", "CPU threads (pool)", at::get_num_threads())
            << fmt::format("{:<26}{}\n", "logical CPUs", std::thread::hardware_concurrency())
            << fmt::format("{:<26}{}\n", "AVX2 kernels (kvbench)", yes(linear_detail::cpu_has_avx2_kernel()))
            << fmt::format("{:<26}{}\n", "bfloat16 GEMM (oneDNN)", yes(linear_detail::hardware_gemm(at::kBFloat16)))
            << fmt::format("{:<26}{}\n", "float16 GEMM (oneDNN)", yes(linear_detail::hardware_gemm(at::kHalf)))
            << fmt::format("{:<26}{}\n", "BLAS kernels", blas_kernels().empty() ? "not OpenBLAS" : blas_kernels())
            << fmt::format("{:<26}{}\n", "MKL / oneDNN (libtorch)",
                           fmt::format("{} / {}", yes(at::hasMKL()), yes(at::hasMKLDNN())));
  std::cout << "\nlibtorch's build configuration:\n" << at::show_config();
}

}  // namespace

void add_doctor_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "doctor", "What this kvbench was built against and what it finds here: libtorch version, whether CUDA "
                "is compiled in, CUDA devices visible, CPU kernels and threads, libtorch's build configuration");
  command->callback(print_doctor);
}

}  // namespace kvbench::cli
