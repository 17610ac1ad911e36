// CPU threads for everything the forward pass calls: libtorch's intra-op pool and the BLAS library's.
#pragma once

namespace kvbench {

// at::set_num_threads does not reach a pthread OpenBLAS (Debian's libtorch calls BLAS through
// libblas.so.3), which keeps one worker per CPU. That pool speeds up large matrix products, but its
// thread count changes the rounding (so reproducible training must fix it), and in processes run side
// by side its idle workers spin on sched_yield beside the others' compute. This sets both to `threads`
// (OpenBLAS is found at run time, so any other BLAS is left alone).
void set_cpu_threads(int threads);

}  // namespace kvbench
