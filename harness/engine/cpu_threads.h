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

// The default `threads`: every CPU this process may run on (its affinity mask, so taskset and SLURM
// allocations count). A decode step is bound by memory bandwidth, which one thread per core does not
// saturate (2 CPUs, 0.5B model: decode 5.1–5.4 tokens/s at 1 thread, 6.3–8.1 at 2), and decode
// dominates generation. Prefill pays for it where the CPUs are one core's two hyperthreads: libtorch's
// workers spin on the hyperthread BLAS runs on after each op (15–47 tokens/s against 65–91 at 1 thread).
int default_cpu_threads();

// Threads for compute-bound work (large matrix products): libtorch's pool, capped at one per physical
// core (libtorch's own default), since hyperthreads share a core's FMA units.
int compute_threads();

}  // namespace kvbench
