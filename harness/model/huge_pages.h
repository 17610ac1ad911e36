// CPU tensors whose memory the kernel is asked to back with 2 MiB pages (madvise MADV_HUGEPAGE), for
// what a decode step streams: every weight, once per token. With 4 KiB pages each step walks the page
// tables of its whole ~GiB of weights; 2 MiB pages need 512 times fewer translations. Linux's default
// (transparent_hugepage "madvise") gives anonymous memory huge pages only where asked, while a
// memory-mapped file, as llama.cpp reads its weights, may get them from the page cache regardless.
// A loop of one-row bfloat16 products over 1 GiB as kvbench's kernel reads it (Zen 4, 2 threads, 4K- and
// 2M-page copies alternating in one process, 8 rounds, 5 runs): 2-7 % faster, a plain sum 15-30 %.
// Where THP is off or absent the advice does nothing and the memory is ordinary.
#pragma once
#include <ATen/ATen.h>

#include <memory>

namespace kvbench {

// Hands out tensors from large mappings (chunks), packed back to back so that small tensors share huge
// pages too. Each tensor keeps its chunk alive, so tensors may outlive the arena. Pages never touched
// cost no memory, so a chunk's unused tail is free.
class HugePageArena {
 public:
  // Uninitialised (zero-filled on first touch) CPU tensor.
  at::Tensor empty(at::IntArrayRef shape, at::ScalarType dtype);
  // A copy of `source` in `dtype` on `device`: on the CPU from the arena, elsewhere as .to() makes it. The
  // values are those of source.to(device, dtype).
  at::Tensor copy_of(const at::Tensor& source, at::Device device, at::ScalarType dtype);

 private:
  struct Chunk;
  std::shared_ptr<Chunk> chunk_;
  size_t used_ = 0;
};

}  // namespace kvbench
