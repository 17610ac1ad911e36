// The two products of decode attention for one sequence's KV head (model/decode_attention.cpp): its query
// heads' scores over the cached keys, and their probability-weighted sums of the cached values. A portable
// version and an AVX2 one compute every element by the same arithmetic, so they agree bit for bit and a
// sequence's result never depends on the CPU's path or on what else shares the call. Plain C types only:
// decode_attention_avx2.cpp is compiled with -mavx2 (see linear_kernels.h).
#pragma once
#include <cstdint>

#include "model/linear_kernels.h"

namespace kvbench::attention_detail {

using linear_detail::WeightType;

// One sequence's KV head: G query rows against N cached entries.
struct HeadRows {
  const float* q = nullptr;  // [G, D] float32
  const void* keys = nullptr;  // entry j's key at keys + j * entry_stride elements of `type`
  const void* values = nullptr;
  WeightType type = WeightType::f32;
  int64_t entry_stride = 0, N = 0, G = 0, D = 0;
  const bool* held = nullptr;  // [N]: false for a ragged cache's padding slots; null when all are held
};

// Cached rows a kernel widens at a time: its scratch is kScratchRows * D floats.
constexpr int64_t kScratchRows = 64;

// scores[g * N + j] = dot(q[g], key j) · scale, or -inf where entry j is not held. dot: eight float32 lanes,
// lane l summing q[d] · k[d] (the product rounded, then the sum; no FMA) over d ≡ l (mod 8) in increasing
// d, for d below D − D % 8; lanes summed as ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)); then the tail columns
// added one by one the same way.
void scores_portable(const HeadRows& h, float scale, float* scores, float* scratch);
void scores_avx2(const HeadRows& h, float scale, float* scores, float* scratch);  // needs AVX2

// out[g * D + d] += probs[g * N + j] · value j[d] for j = 0, 1, …, N − 1 in turn (the product rounded, then
// the sum; no FMA).
void values_portable(const HeadRows& h, const float* probs, float* out, float* scratch);
void values_avx2(const HeadRows& h, const float* probs, float* out, float* scratch);  // needs AVX2

namespace exp_poly_constants {  // softmax_*'s exponential, below
constexpr float kLowest = -87.33f, kLog2e = 1.44269504088896341f, kC1 = 0.693359375f, kC2 = -2.12194440e-4f;
constexpr float kP[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                         4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
}  // namespace exp_poly_constants

// One row of n scores → probabilities in place: w[j] ← e_j / Σ e_k, e_j = exp_poly(w[j] − max w), where
// exp_poly is Cephes' expf (x·log2 e + ½ floored to n, r = x − n·C1 − n·C2, a degree-5 polynomial in r,
// scaled by 2^n; every product rounded, then its sum: no FMA), 0 below −87.33 (−inf: a key not seen). The
// sum in eight lanes, lane l over j ≡ l (mod 8) in increasing j, combined as ((l0+l1)+(l2+l3)) +
// ((l4+l5)+(l6+l7)). A row whose scores are all −inf becomes all 0. Each element's exponential depends
// on nothing but its score and the row's maximum, so the AVX2 version agrees with the portable one bit for
// bit; std::exp, element by element, cost more than the products it normalises in small blocks.
void softmax_portable(float* w, int64_t n);
void softmax_avx2(float* w, int64_t n);  // needs AVX2

// Rows [first, first + n) of `rows` (keys or values) as float32: the cache's own rows when it is float32
// (*stride = entry_stride), else widened exactly into scratch (*stride = D).
const float* rows_as_float(const HeadRows& h, const void* rows, int64_t first, int64_t n, float* scratch,
                           int64_t* stride);

}  // namespace kvbench::attention_detail
