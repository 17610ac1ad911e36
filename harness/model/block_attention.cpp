#include "model/block_attention.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "model/cpu_threads.h"
#include "model/decode_attention_kernels.h"
#include "model/linear.h"

namespace kvbench {

namespace {

// A block's scores are written by one product and read by the softmax and the next: at most ~4 MiB of
// them (of a core's cache), and 8 to 64 query rows a block (fewer rows make the products inefficient;
// more leave 2 cores with too few blocks of a short chunk to share).
constexpr int64_t kScoreBlockBytes = int64_t{4} << 20, kMinRows = 8, kMaxRows = 64;
// Below this many multiply-adds a call runs on the calling thread: waking the pool would cost more.
constexpr int64_t kParallelWork = int64_t{1} << 22;

// One block: query rows [row, row + rows) of sequence b under KV head kv, which see keys [begin, end) at most.
struct Block {
  int64_t b, kv, row, rows, begin, end;
  std::vector<uint8_t> without_key;  // per row: 1 where the row sees no key (its output is 0)
  int64_t keys() const { return end - begin; }
};

// The mask as [Bm, KVm, T, N] (Bm ∈ {1, B}, KVm ∈ {1, KV}), contiguous; undefined when every key is visible.
at::Tensor mask_per_head(const at::Tensor& allowed, int64_t T, int64_t N) {
  if (!allowed.defined()) return {};
  if (allowed.dim() == 4) return allowed.expand({allowed.size(0), allowed.size(1), T, N}).to(at::kBool).contiguous();
  return allowed.reshape({allowed.dim() == 3 ? allowed.size(0) : 1, 1, T, N}).to(at::kBool).contiguous();
}

// The [T, N] mask of sequence b's KV head kv.
at::Tensor head_mask(const at::Tensor& mask, int64_t b, int64_t kv) {
  return mask[std::min(b, mask.size(0) - 1)][std::min(kv, mask.size(1) - 1)];
}

// The longest run [first, last) of keys in [block.begin, block.end) that every row with a key sees, from the
// block's rows of the mask (`visible`, [rows, N]). A causal block sees all keys but its last `rows`; the
// counter-causal pass's mirror block all but its first. Rows without a key are left out: their output is 0
// whatever their scores.
std::pair<int64_t, int64_t> keys_all_rows_see(const at::Tensor& visible, const Block& block) {
  const bool* first = visible.data_ptr<bool>();
  const int64_t N = visible.size(1);
  std::vector<uint8_t> all(block.keys(), 1);
  for (int64_t r = 0; r < block.rows; ++r)
    if (!block.without_key[r])
      for (int64_t c = 0; c < block.keys(); ++c) all[c] &= first[r * N + block.begin + c];
  std::pair<int64_t, int64_t> longest{block.begin, block.begin};
  for (int64_t c = 0; c < block.keys();) {
    int64_t run_end = c;
    while (run_end < block.keys() && all[run_end]) ++run_end;
    if (run_end - c > longest.second - longest.first) longest = {block.begin + c, block.begin + run_end};
    c = run_end + 1;
  }
  return longest;
}

// Rows [row, row + rows) of sequence b under KV head kv: the span of keys its rows see (from the first
// key any row sees to the last) and which rows see none. Each row is scanned from the right to its last
// visible key, and from the left no further than the span found so far.
Block make_block(const at::Tensor& mask, int64_t b, int64_t kv, int64_t row, int64_t rows, int64_t N) {
  Block block{b, kv, row, rows, 0, N, std::vector<uint8_t>(rows, 0)};
  if (!mask.defined()) return block;
  block.begin = N;
  block.end = 0;
  const bool* first = head_mask(mask, b, kv).data_ptr<bool>() + row * N;
  for (int64_t r = 0; r < rows; ++r) {
    const bool* visible = first + r * N;
    int64_t end = N;
    while (end > 0 && !visible[end - 1]) --end;
    block.without_key[r] = end == 0;
    block.end = std::max(block.end, end);
    for (int64_t c = 0; c < std::min(block.begin, end); ++c)
      if (visible[c]) {
        block.begin = c;
        break;
      }
  }
  block.begin = std::min(block.begin, block.end);
  return block;
}

struct Inputs {
  at::Tensor q, k, v, mask;  // q [B, H, T, D], k/v [B, KV, N, D], mask as mask_per_head
  at::Tensor out;            // [B, T, KV, G, D], zeros
  at::Tensor probs;          // [B, KV, G, T, N] zeros, or undefined
  at::ScalarType score_dtype;
  bool by_rows = false;      // attend_rows serves every block (q float32 contiguous, k/v sharing a layout)
};

// Blocks up to this many multiply-adds (G · rows · keys · D) attend row by row (attend_rows): a tiny model's
// block (2 × 64 × 80 × 8) is a few µs of arithmetic under ~10 ATen ops of ~5 µs each. Larger blocks keep the
// two BLAS products, which run the arithmetic several times faster than the row kernel.
constexpr int64_t kRowKernelWork = int64_t{1} << 20;

bool row_kernel_serves(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t G, int64_t rows,
                       int64_t N) {
  const auto t = k.scalar_type();
  return (t == at::kFloat || t == at::kBFloat16 || t == at::kHalf) && q.scalar_type() == t && v.scalar_type() == t &&
         G * rows * N * q.size(3) <= kRowKernelWork;
}

// The block row by row: each row's G query heads over the keys from the first to the last it sees (the
// others −inf), by decode attention's products and softmax_* (decode_attention_kernels.h), so a row's
// result depends on its query, keys and mask alone.
void attend_rows(const Inputs& in, const Block& block) {
  using namespace attention_detail;
  const int64_t T = in.q.size(2), D = in.q.size(3), KV = in.k.size(1), G = in.q.size(1) / KV, N = in.k.size(2);
  const bool simd = linear_detail::cpu_has_avx2_kernel();
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // k and v share one layout (block_attention): one offset to this sequence's KV head, in bytes.
  const int64_t element = in.k.element_size(), stride = in.k.stride(2);
  const int64_t head = (block.b * in.k.stride(0) + block.kv * in.k.stride(1)) * element;
  const auto* keys = static_cast<const char*>(in.k.data_ptr()) + head;
  const auto* values = static_cast<const char*>(in.v.data_ptr()) + head;
  const bool* mask = in.mask.defined() ? head_mask(in.mask, block.b, block.kv).data_ptr<bool>() : nullptr;
  const float* q = in.q.data_ptr<float>() + (block.b * KV + block.kv) * G * T * D;
  std::vector<float> queries(G * D), weights(G * block.keys()), rows(kScratchRows * D), out(G * D);
  for (int64_t r = 0; r < block.rows; ++r) {
    if (block.without_key[r]) continue;
    const int64_t t = block.row + r;
    const bool* seen = mask ? mask + t * N : nullptr;
    int64_t begin = block.begin, end = block.end;
    while (seen && !seen[begin]) ++begin;
    while (seen && !seen[end - 1]) --end;
    for (int64_t g = 0; g < G; ++g) std::copy_n(q + (g * T + t) * D, D, queries.data() + g * D);
    const int64_t n = end - begin;
    const HeadRows h{queries.data(), keys + begin * stride * element, values + begin * stride * element,
                     linear_detail::weight_type(in.k.scalar_type()), stride, n, G, D, seen ? seen + begin : nullptr};
    (simd ? scores_avx2 : scores_portable)(h, scale, weights.data(), rows.data());
    for (int64_t g = 0; g < G; ++g) {
      (simd ? softmax_avx2 : softmax_portable)(weights.data() + g * n, n);
      if (in.probs.defined())
        std::copy_n(weights.data() + g * n, n,
                    in.probs.data_ptr<float>() + (((block.b * KV + block.kv) * G + g) * T + t) * N + begin);
    }
    std::fill(out.begin(), out.end(), 0.0f);
    (simd ? values_avx2 : values_portable)(h, weights.data(), out.data(), rows.data());
    const int64_t out_offset = ((block.b * T + t) * KV + block.kv) * G * D * in.out.element_size();
    linear_detail::store_as(in.out.scalar_type(), out.data(), static_cast<char*>(in.out.data_ptr()) + out_offset, G * D);
  }
}

void attend_block(const Inputs& in, const Block& block) {
  const int64_t n = block.keys(), rows = block.rows, KV = in.k.size(1), G = in.q.size(1) / KV, D = in.q.size(3);
  if (n == 0) return;  // no row sees a key: out (and probs) stay 0
  if (in.by_rows) return attend_rows(in, block);
  // The G query heads of this KV head, stacked along the row axis: one product serves them all.
  const at::Tensor q = in.q[block.b].narrow(0, block.kv * G, G).narrow(1, block.row, rows).reshape({G * rows, D});
  const at::Tensor keys = in.k[block.b][block.kv].narrow(0, block.begin, n);
  const at::Tensor values = in.v[block.b][block.kv].narrow(0, block.begin, n);
  at::Tensor scores = at::mm(q, keys.t()).to(in.score_dtype);
  scores.div_(std::sqrt(static_cast<double>(D)));
  if (in.mask.defined()) {
    // Only the keys before and after those every row sees: the rest of a causal block's scores (all but
    // its diagonal square) would be read and written back unchanged.
    const at::Tensor visible = head_mask(in.mask, block.b, block.kv).narrow(0, block.row, rows);
    const auto [all_begin, all_end] = keys_all_rows_see(visible, block);
    for (const auto& [from, to] : {std::pair{block.begin, all_begin}, std::pair{all_end, block.end}})
      if (to > from)
        scores.view({G, rows, n})
            .narrow(2, from - block.begin, to - from)
            .masked_fill_(visible.narrow(1, from, to - from).logical_not(), -std::numeric_limits<double>::infinity());
  }
  const at::Tensor probs = at::softmax(scores, -1), per_head = probs.view({G, rows, n});
  if (std::find(block.without_key.begin(), block.without_key.end(), 1) != block.without_key.end()) {
    const at::Tensor none = at::from_blob(const_cast<uint8_t*>(block.without_key.data()), {1, rows, 1}, at::kByte);
    per_head.masked_fill_(none.to(at::kBool), 0.0);  // all −inf: NaN, not 0
  }
  if (in.probs.defined()) in.probs[block.b][block.kv].narrow(1, block.row, rows).narrow(2, block.begin, n).copy_(per_head);
  const at::Tensor attended = at::mm(probs.to(values.scalar_type()), values);  // [G * rows, D]
  in.out[block.b].narrow(0, block.row, rows).select(1, block.kv).copy_(attended.view({G, rows, D}).transpose(0, 1));
}

}  // namespace

bool block_attention_supported(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  const bool needs_grad = at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad());
  return q.device().is_cpu() && !needs_grad;
}

at::Tensor block_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed,
                           at::Tensor* probs_out) {
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3), KV = k.size(1), G = H / KV, N = k.size(2);
  const at::ScalarType score_dtype = q.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const int64_t rows = std::clamp(kScoreBlockBytes / std::max<int64_t>(1, G * N * 4), kMinRows, kMaxRows);
  const bool by_rows = row_kernel_serves(q, k, v, G, rows, N);
  // The row kernel reads k and v through one layout, contiguous along D, and q as float32 rows.
  const bool one_layout = k.stride(3) == 1 && k.strides() == v.strides();
  const Inputs in{by_rows ? q.to(at::kFloat).contiguous() : q,
                  by_rows && !one_layout ? k.contiguous() : k,
                  by_rows && !one_layout ? v.contiguous() : v,
                  mask_per_head(allowed, T, N),
                  at::zeros({B, T, KV, G, D}, v.options()),
                  probs_out ? at::zeros({B, KV, G, T, N}, q.options().dtype(score_dtype)) : at::Tensor(),
                  score_dtype,
                  by_rows};
  std::vector<Block> blocks;
  int64_t work = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t kv = 0; kv < KV; ++kv)
      for (int64_t row = 0; row < T; row += rows) {
        blocks.push_back(make_block(in.mask, b, kv, row, std::min(rows, T - row), N));
        work += G * blocks.back().rows * blocks.back().keys() * D;
      }
  // The largest blocks first, each thread taking the next block as it finishes one: a causal prefill's
  // blocks grow along the rows, and equal shares of them would leave one thread with most of the work.
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const Block& a, const Block& b) { return a.rows * a.keys() > b.rows * b.keys(); });
  std::atomic<size_t> next{0};
  // The pool's threads do not inherit the caller's inference mode, and its tensors may only be written there.
  const bool inference = c10::InferenceMode::is_enabled();
  const auto work_through = [&](int64_t, int64_t) {
    const c10::InferenceMode same_mode(inference);
    for (size_t i = next++; i < blocks.size(); i = next++) attend_block(in, blocks[i]);
  };
  const int64_t workers =
      work < kParallelWork ? 1 : std::min<int64_t>(compute_threads(), static_cast<int64_t>(blocks.size()));
  if (workers == 1) {
    work_through(0, 1);
  } else {
    at::parallel_for(0, workers, 1, work_through);
  }
  if (probs_out) *probs_out = in.probs.view({B, H, T, N});
  return in.out.view({B, T, H * D});
}

}  // namespace kvbench
