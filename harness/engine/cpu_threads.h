// CPU threads for everything the forward pass calls: libtorch's intra-op pool and the BLAS library's.
#pragma once

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

// The default `threads`: libtorch's own, one per physical core (cpuinfo; OMP_NUM_THREADS overrides it).
// Measured on 2 CPUs that are one core's two hyperthreads, shared with other jobs (0.5B model, float32):
// at 1 thread decode 5.1–5.5 tokens/s and prefill 65–91, steady; at 2 threads decode 6.3–8.1 while
// the other jobs left a CPU free but 1.1–2.5 when they did not (each parallel op waits a scheduler tick
// for a preempted worker), and prefill 15–47 (libtorch's workers spin on the hyperthread BLAS runs on).
// On an idle machine with hyperthreads, --threads <logical CPUs> can speed up decode. (Those figures are
// from before the build used OpenMP, when our own kernels ran on one thread at any setting. Since, on 2
// idle vCPUs that libtorch counts as one core: decode 14.9 tokens/s at 1 thread, 23.6 at 2.)
int default_cpu_threads();

// Threads for compute-bound work (large matrix products): libtorch's pool, capped at one per physical
// core (libtorch's own default), since hyperthreads share a core's FMA units.
int compute_threads();

}  // namespace kvbench
