// This process and this machine: the build's description, the threads kvbench computes on, the heap's
// settings for its large temporaries, and what `kvbench doctor` reports.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace kvbench::api {

// One line: kvbench's version and commit, the libtorch, whether CUDA is compiled in, GPUs visible.
std::string build_description();

// CPU threads for libtorch and kvbench's kernels (model/cpu_threads.h); 0 = the default for this machine.
void set_threads(int threads);

// glibc's allocator settings for kvbench's large temporaries (once per process, before any work).
void tune_allocator();

// `kvbench doctor`'s facts, (what, value) a row: libtorch, CUDA, threads, CPU kernels, BLAS.
std::vector<std::pair<std::string, std::string>> machine_facts();
// libtorch's own build configuration (at::show_config).
std::string torch_build_config();

}  // namespace kvbench::api
