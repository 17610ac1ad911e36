#include "model/huge_pages.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace kvbench {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// Chunks of at least this much address space: a model's weights take a handful, one large table its own.
constexpr size_t kChunkBytes = size_t{256} << 20;
constexpr size_t kAlignment = 64;  // as c10's CPU allocator: every vector load of a row start is aligned

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

struct HugePageArena::Chunk {
  explicit Chunk(size_t bytes) : mapped_bytes(bytes + kHugePage) {
    // Over-allocate by a huge page so the usable range can start on a 2 MiB boundary: only whole aligned
    // 2 MiB ranges can be mapped by huge pages.
    mapped = ::mmap(nullptr, mapped_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) fail("cannot map {} MiB for model weights ({})", mapped_bytes >> 20, std::strerror(errno));
    begin = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(mapped), kHugePage));
    size = bytes;
#ifdef MADV_HUGEPAGE
    ::madvise(begin, size, MADV_HUGEPAGE);  // advice only: fails harmlessly where THP is absent
#endif
  }
  ~Chunk() { ::munmap(mapped, mapped_bytes); }
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  void* mapped = nullptr;
  size_t mapped_bytes = 0;
  uint8_t* begin = nullptr;
  size_t size = 0;
};

at::Tensor HugePageArena::empty(at::IntArrayRef shape, at::ScalarType dtype) {
  const size_t bytes = round_up(static_cast<size_t>(c10::multiply_integers(shape)) * c10::elementSize(dtype), kAlignment);
  if (!chunk_ || used_ + bytes > chunk_->size) {
    chunk_ = std::make_shared<Chunk>(std::max(kChunkBytes, round_up(bytes, kHugePage)));
    used_ = 0;
  }
  void* data = chunk_->begin + used_;
  used_ += bytes;
  return at::from_blob(data, shape, [keep = chunk_](void*) {}, at::TensorOptions().dtype(dtype));
}

at::Tensor HugePageArena::copy_of(const at::Tensor& source, at::Device device, at::ScalarType dtype) {
  // Converting dtype on the CPU first keeps bfloat16 → float32 exact and spares the device a round trip
  // of the wider type.
  if (!device.is_cpu()) return source.to(at::kCPU, dtype, /*non_blocking=*/false, /*copy=*/true).to(device);
  at::Tensor copy = empty(source.sizes(), dtype);
  copy.copy_(source);
  return copy;
}

}  // namespace kvbench
