// CPU threads for everything the forward pass calls: libtorch's intra-op pool and the BLAS library's.
#pragma once

namespace kvbench {

// at::set_num_threads does not reach a pthread OpenBLAS (Debian's libtorch calls BLAS through
// libblas.so.3): that keeps one worker per core, and on a machine whose cores are hyperthread siblings
// its idle workers spin on sched_yield beside the compute thread. This sets both to `threads`
// (OpenBLAS is found at run time, so any other BLAS is left alone).
void set_cpu_threads(int threads);

}  // namespace kvbench
