// CPU threads for everything the forward pass calls: libtorch's intra-op pool and the BLAS library's.
#pragma once
#include <string>

namespace kvbench {

// One pool: libtorch's, with `threads` workers (kvbench::linear's own kernel runs in it too); BLAS runs
// single-threaded, and kvbench::linear splits large products over output features in libtorch's pool
// instead (one BLAS call per physical core). at::set_num_threads does not reach a pthread OpenBLAS
// (Debian's libtorch calls BLAS through libblas.so.3), which keeps its own worker per CPU; two pools on
// the same cores hand the CPU back and forth, each one's idle workers spinning while the other's work
// (2 CPUs: prefill 12–16 tokens/s with both pools at 2 threads against 15–47 with BLAS at 1, decode
// 2.9–4.9 against 6.3–8.1). A single-threaded BLAS also rounds the same whatever `threads` is. OpenBLAS
// is found at run time; any other BLAS is left alone.
void set_cpu_threads(int threads);

// "OpenBLAS <kernels>" where OpenBLAS is loaded (its dynamic-arch choice, or OPENBLAS_CORETYPE's: an
// environment that sets Haswell on an AVX-512 CPU halves float32 GEMM), else empty.
std::string blas_kernels();

// The default `threads`: every logical CPU this process may run on (OMP_NUM_THREADS overrides it), while
// compute-bound products stay at one thread per physical core (compute_threads). Decoding reads weights
// at the memory bandwidth, and one core's hyperthread pair keeps more reads in flight than one thread:
// on 2 idle vCPUs that libtorch counts as one core (qwen2.5-0.5b float32, fused norms, same run):
// decode 15.1 tokens/s at 1 thread, 24.8–25.0 at 2; 16 samples batched 58.8 → 103.4 tokens/s; prefill
// 121 → 118 and the counter-causal pass (n = 1024) 8.5 → 8.7 s, equal within noise, since their GEMMs
// run on compute_threads either way. On 2 vCPUs that the kernel lists as two cores (GEMM 107 GFLOP/s at
// one thread, 208 at two) compute_threads is 2, and prefill doubles: 122 → 218–226 tokens/s. On a busy
// machine a parallel op waits for a preempted worker (before the OpenMP build, 2 threads decoded at
// 1.1–2.5 tokens/s while other jobs held a CPU): `--threads 1` there, and for processes run side by side.
int default_cpu_threads();

// Threads for compute-bound work (large matrix products): libtorch's pool, capped at one per physical
// core (as the kernel's topology counts them, else libtorch's default), since hyperthreads share a
// core's FMA units.
int compute_threads();

}  // namespace kvbench
