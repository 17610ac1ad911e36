#include "model/decode_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "model/decode_attention_kernels.h"

namespace kvbench {

namespace attention_detail {

const float* rows_as_float(const HeadRows& h, const void* rows, int64_t first, int64_t n, float* scratch,
                           int64_t* stride) {
  if (h.type == WeightType::f32) {
    *stride = h.entry_stride;
    return static_cast<const float*>(rows) + first * h.entry_stride;
  }
  const auto* row = static_cast<const uint16_t*>(rows) + first * h.entry_stride;
  for (int64_t e = 0; e < n; ++e, row += h.entry_stride)
    (h.type == WeightType::bf16 ? linear_detail::widen_bf16 : linear_detail::widen_f16)(row, scratch + e * h.D, h.D);
  *stride = h.D;
  return scratch;
}

namespace {

// The dot product of decode_attention_kernels.h: the compiler vectorises its lanes, not its order.
float dot(const float* a, const float* b, int64_t n) {
  float lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += a[i + l] * b[i + l];
  float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace

// Key rows are widened kScratchRows at a time, once for the G query heads.
void scores_portable(const HeadRows& h, float scale, float* scores, float* scratch) {
  for (int64_t j0 = 0; j0 < h.N; j0 += kScratchRows) {
    const int64_t n = std::min(kScratchRows, h.N - j0);
    int64_t stride = 0;
    const float* k = rows_as_float(h, h.keys, j0, n, scratch, &stride);
    for (int64_t g = 0; g < h.G; ++g)
      for (int64_t e = 0; e < n; ++e)
        scores[g * h.N + j0 + e] = !h.held || h.held[j0 + e] ? dot(h.q + g * h.D, k + e * stride, h.D) * scale
                                                             : -std::numeric_limits<float>::infinity();
  }
}

void values_portable(const HeadRows& h, const float* probs, float* out, float* scratch) {
  for (int64_t j0 = 0; j0 < h.N; j0 += kScratchRows) {
    const int64_t n = std::min(kScratchRows, h.N - j0);
    int64_t stride = 0;
    const float* v = rows_as_float(h, h.values, j0, n, scratch, &stride);
    for (int64_t g = 0; g < h.G; ++g)
      for (int64_t e = 0; e < n; ++e) {
        const float p = probs[g * h.N + j0 + e];
        float* o = out + g * h.D;
        for (int64_t d = 0; d < h.D; ++d) o[d] += p * v[e * stride + d];
      }
  }
}

namespace {

float exp_poly(float x) {
  using namespace exp_poly_constants;
  if (!(x >= kLowest)) return 0.0f;
  const float n = std::floor(x * kLog2e + 0.5f);
  float r = x - n * kC1;
  r = r - n * kC2;
  float y = kP[0];
  for (int i = 1; i < 6; ++i) y = y * r + kP[i];
  y = y * (r * r);
  y = y + r;
  y = y + 1.0f;
  const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
  float two_to_n;
  std::memcpy(&two_to_n, &bits, sizeof two_to_n);
  return y * two_to_n;
}

}  // namespace

void softmax_portable(float* w, int64_t n) {
  float top = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j) top = std::max(top, w[j]);
  if (top == -std::numeric_limits<float>::infinity()) {
    std::fill(w, w + n, 0.0f);
    return;
  }
  float lanes[8] = {};
  for (int64_t j = 0; j < n; ++j) lanes[j % 8] += w[j] = exp_poly(w[j] - top);
  const float total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (int64_t j = 0; j < n; ++j) w[j] /= total;
}

}  // namespace attention_detail

namespace {

// A query row as float32: the row itself, or its (exact) widening into `scratch` [n].
const float* as_float(const float* row, int64_t, float*) { return row; }
const float* as_float(const c10::BFloat16* row, int64_t n, float* scratch) {
  linear_detail::widen_bf16(reinterpret_cast<const uint16_t*>(row), scratch, n);
  return scratch;
}
const float* as_float(const c10::Half* row, int64_t n, float* scratch) {
  linear_detail::widen_f16(reinterpret_cast<const uint16_t*>(row), scratch, n);
  return scratch;
}

// float32 results [n] stored in the model's dtype, rounded as .to() rounds.
void store(const float* from, float* to, int64_t n) { std::copy(from, from + n, to); }
void store(const float* from, c10::BFloat16* to, int64_t n) {
  linear_detail::narrow_bf16(from, reinterpret_cast<uint16_t*>(to), n);
}
void store(const float* from, c10::Half* to, int64_t n) {
  linear_detail::narrow_f16(from, reinterpret_cast<uint16_t*>(to), n);
}

// One sequence's KV head: its G query heads over the N cached entries (keys/values strided along N).
template <typename T>
struct HeadTask {
  const T* q;          // [G, D] query rows of this KV head
  const T* keys;       // entry j at keys + j * entry_stride
  const T* values;
  int64_t entry_stride, N;
  T* out;              // [G, D]
  float* probs;        // [G, N] (head stride probs_stride) or null
  int64_t probs_stride;
  const bool* held;    // [N]: false for a ragged cache's padding slots; null when every slot holds an entry
};

// The working rows of one thread: a KV head's scores [G, N], widened key or value rows, its queries and
// outputs in float32 [G, D].
struct HeadScratch {
  std::vector<float> weights, rows, queries, out;
};

template <typename T>
constexpr attention_detail::WeightType element_type() {
  if constexpr (std::is_same_v<T, c10::BFloat16>) return attention_detail::WeightType::bf16;
  if constexpr (std::is_same_v<T, c10::Half>) return attention_detail::WeightType::f16;
  return attention_detail::WeightType::f32;
}

// Scores, then the softmax over entries in order (std::exp: the sum's order fixed), then the values.
// 16-bit queries are widened, and outputs rounded, here: two ATen conversions a layer cost more than
// this kernel on a short cache.
template <typename T>
void attend_head(const HeadTask<T>& t, int64_t G, int64_t D, HeadScratch& s) {
  using namespace attention_detail;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const bool simd = linear_detail::cpu_has_avx2_kernel();
  s.weights.resize(G * t.N);
  s.rows.resize(kScratchRows * D);
  s.queries.resize(G * D);
  s.out.assign(G * D, 0.0f);
  const HeadRows h{as_float(t.q, G * D, s.queries.data()), t.keys, t.values, element_type<T>(), t.entry_stride, t.N, G, D,
                   t.held};
  (simd ? scores_avx2 : scores_portable)(h, scale, s.weights.data(), s.rows.data());
  for (int64_t g = 0; g < G; ++g) {
    float* w = s.weights.data() + g * t.N;
    float top = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < t.N; ++j) top = std::max(top, w[j]);
    float total = 0.0f;
    for (int64_t j = 0; j < t.N; ++j) total += w[j] = std::exp(w[j] - top);
    for (int64_t j = 0; j < t.N; ++j) w[j] /= total;
    if (t.probs) std::copy(w, w + t.N, t.probs + g * t.probs_stride);
  }
  (simd ? values_avx2 : values_portable)(h, s.weights.data(), s.out.data(), s.rows.data());
  store(s.out.data(), t.out, G * D);
}

}  // namespace

bool decode_attention_supported(const at::Tensor& q) {
  const auto t = q.scalar_type();
  return q.is_cpu() && (t == at::kFloat || t == at::kBFloat16 || t == at::kHalf);
}

namespace {

template <typename T>
at::Tensor attend_groups(const at::Tensor& q, const std::vector<DecodeAttentionGroup>& groups) {
  const int64_t M = q.size(0), H = q.size(1), D = q.size(2);
  const at::Tensor queries = q.to(c10::CppTypeToScalarType<T>::value).contiguous();
  at::Tensor out = at::empty({M, H * D}, queries.options());
  std::vector<HeadTask<T>> tasks;
  std::vector<at::Tensor> masks;  // keeps each group's contiguous mask alive while the tasks read it
  int64_t row = 0;
  for (const DecodeAttentionGroup& group : groups) {
    const at::Tensor& k = group.keys;
    const int64_t R = k.size(0), KV = k.size(1), N = k.size(2), G = H / KV;
    TORCH_CHECK(k.stride(3) == 1 && group.values.stride(3) == 1 && k.strides() == group.values.strides(),
                "decode_attention: keys and values must share a layout contiguous along D");
    const at::Tensor held = group.held.defined() ? group.held.to(at::kBool).contiguous() : at::Tensor();
    TORCH_CHECK(!held.defined() || held.sizes() == at::IntArrayRef({R, KV, N}), "decode_attention: held must be [R, KV, N]");
    masks.push_back(held);
    for (int64_t r = 0; r < R; ++r, ++row)
      for (int64_t kv = 0; kv < KV; ++kv) {
        float* probs = group.probs.defined() ? group.probs.data_ptr<float>() + group.probs.stride(0) * r +
                                                   group.probs.stride(1) * kv * G
                                             : nullptr;
        tasks.push_back({queries.data_ptr<T>() + (row * H + kv * G) * D,
                         k.data_ptr<T>() + k.stride(0) * r + k.stride(1) * kv,
                         group.values.data_ptr<T>() + k.stride(0) * r + k.stride(1) * kv, k.stride(2), N,
                         out.data_ptr<T>() + (row * H + kv * G) * D, probs,
                         group.probs.defined() ? group.probs.stride(1) : 0,
                         held.defined() ? held.data_ptr<bool>() + (r * KV + kv) * N : nullptr});
      }
  }
  TORCH_CHECK(row == M, "decode_attention: the groups hold ", row, " rows, q has ", M);
  const int64_t G = H / (groups.empty() ? 1 : groups.front().keys.size(1));
  // Small caches (a tiny model, short prompts) attend on the calling thread: a pass of the pool costs
  // ~6 µs here, the work of kParallelAttention about 25 µs on one thread. Qwen2.5-0.5B decoding one
  // sequence with ~170 entries cached (2 KV heads, 2 tasks) is ~5× that: it had stayed on one thread, at
  // 4 % of a float32 decode step.
  constexpr int64_t kParallelAttention = int64_t{1} << 16;  // multiply-adds: dot products and value sums
  int64_t work = 0;
  for (const auto& task : tasks) work += 2 * task.N * G * D;
  const int64_t grain = work < kParallelAttention ? static_cast<int64_t>(tasks.size()) : 1;
  at::parallel_for(0, static_cast<int64_t>(tasks.size()), std::max<int64_t>(1, grain), [&](int64_t begin, int64_t end) {
    HeadScratch scratch;
    for (int64_t i = begin; i < end; ++i) attend_head(tasks[i], G, D, scratch);
  });
  return out.to(q.scalar_type());
}

}  // namespace

at::Tensor decode_attention(const at::Tensor& q, const std::vector<DecodeAttentionGroup>& groups) {
  switch (groups.empty() ? at::kFloat : groups.front().keys.scalar_type()) {
    case at::kBFloat16: return attend_groups<c10::BFloat16>(q, groups);
    case at::kHalf: return attend_groups<c10::Half>(q, groups);
    default: return attend_groups<float>(q, groups);
  }
}

}  // namespace kvbench
