// The AVX2 decode attention products (see decode_attention_kernels.h for the arithmetic every element
// follows). Compiled with -mavx2 but not -mfma: without FMA instructions the compiler cannot fuse a
// product into its sum, which would change the bits. Called only after a CPU check; intrinsics only.
#include <immintrin.h>

#include <algorithm>

#include "model/decode_attention_kernels.h"

namespace kvbench::attention_detail {

namespace {

constexpr int kEntries = 8;  // entries scored together: one register of results

int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

// ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)) of each of eight registers, as the eight elements of one: the
// first horizontal adds pair neighbours, the second pairs the pairs (per 128-bit half), and the two halves
// of each register's sum meet in the last add.
__m256 lane_sums(const __m256 acc[kEntries]) {
  const __m256 quads0 = _mm256_hadd_ps(_mm256_hadd_ps(acc[0], acc[1]), _mm256_hadd_ps(acc[2], acc[3]));
  const __m256 quads1 = _mm256_hadd_ps(_mm256_hadd_ps(acc[4], acc[5]), _mm256_hadd_ps(acc[6], acc[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(quads0, quads1, 0x20), _mm256_permute2f128_ps(quads0, quads1, 0x31));
}

// Eight entries' keys (rows `k`, `stride` apart) scored by one query row: the key rows stay in L1 while the
// G query rows pass them, and one register holds the eight dot products before their tails.
void score_entries(const HeadRows& h, const float* q, const float* k, int64_t stride, float scale, float* out) {
  const int64_t D = h.D, D_blocks = D - D % 8;
  __m256 acc[kEntries];
  for (int e = 0; e < kEntries; ++e) acc[e] = _mm256_setzero_ps();
  for (int64_t d = 0; d < D_blocks; d += 8) {
    const __m256 qv = _mm256_loadu_ps(q + d);
    for (int e = 0; e < kEntries; ++e)
      acc[e] = _mm256_add_ps(acc[e], _mm256_mul_ps(qv, _mm256_loadu_ps(k + e * stride + d)));
  }
  alignas(32) float sums[kEntries];
  _mm256_store_ps(sums, lane_sums(acc));
  for (int e = 0; e < kEntries; ++e) {
    float s = sums[e];
    for (int64_t d = D_blocks; d < D; ++d) s += q[d] * k[e * stride + d];
    out[e] = s * scale;
  }
}

// The last N % 8 entries' keys as eight rows in scratch (stride D), the missing ones zero, so that they
// are scored as a full block: each entry's arithmetic does not depend on its neighbours.
const float* padded_keys(const HeadRows& h, int64_t first, int64_t n, float* scratch) {
  int64_t stride = 0;
  const float* k = rows_as_float(h, h.keys, first, n, scratch, &stride);
  for (int64_t e = 0; e < kEntries; ++e)
    for (int64_t d = 0; d < h.D; ++d) scratch[e * h.D + d] = e < n ? k[e * stride + d] : 0.0f;
  return scratch;
}

// Columns [0, 8B) of one head's output plus the probability-weighted rows of n entries, in entry order:
// B registers of sums, each its own dependency chain (one register's chain alone waited on the adder's
// latency every row).
template <int B>
void add_rows(const float* p, const float* v, int64_t stride, int64_t n, float* o) {
  __m256 acc[B];
  // Each loop over the registers is unrolled explicitly: otherwise GCC 12 kept the sums on the stack (a
  // store and a reload per row and register).
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) acc[b] = _mm256_loadu_ps(o + 8 * b);
  for (int64_t e = 0; e < n; ++e) {
    const __m256 pe = _mm256_set1_ps(p[e]);
#pragma GCC unroll 8
    for (int b = 0; b < B; ++b) acc[b] = _mm256_add_ps(acc[b], _mm256_mul_ps(pe, _mm256_loadu_ps(v + e * stride + 8 * b)));
  }
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) _mm256_storeu_ps(o + 8 * b, acc[b]);
}

}  // namespace

void scores_avx2(const HeadRows& h, float scale, float* scores, float* scratch) {
  const float none = -__builtin_inff();
  for (int64_t j0 = 0; j0 < h.N; j0 += kEntries) {
    const int64_t n = smaller(kEntries, h.N - j0);
    int64_t stride = h.D;
    const float* k = n == kEntries ? rows_as_float(h, h.keys, j0, n, scratch, &stride) : padded_keys(h, j0, n, scratch);
    for (int64_t g = 0; g < h.G; ++g) {
      float block[kEntries];
      score_entries(h, h.q + g * h.D, k, stride, scale, block);
      for (int64_t e = 0; e < n; ++e) scores[g * h.N + j0 + e] = !h.held || h.held[j0 + e] ? block[e] : none;
    }
  }
}

// A block of value rows is widened once for the G query heads.
void values_avx2(const HeadRows& h, const float* probs, float* out, float* scratch) {
  constexpr int64_t kWide = 64;  // columns summed in registers at once
  const int64_t D = h.D, D_blocks = D - D % 8;
  for (int64_t j0 = 0; j0 < h.N; j0 += kScratchRows) {
    const int64_t n = smaller(kScratchRows, h.N - j0);
    int64_t stride = 0;
    const float* v = rows_as_float(h, h.values, j0, n, scratch, &stride);
    for (int64_t g = 0; g < h.G; ++g) {
      const float* p = probs + g * h.N + j0;
      float* o = out + g * D;
      int64_t d = 0;
      for (; d + kWide <= D_blocks; d += kWide) add_rows<kWide / 8>(p, v + d, stride, n, o + d);
      for (; d < D_blocks; d += 8) add_rows<1>(p, v + d, stride, n, o + d);
      for (; d < D; ++d)
        for (int64_t e = 0; e < n; ++e) o[d] += p[e] * v[e * stride + d];
    }
  }
}

namespace {

__m256 exp_poly8(__m256 x) {
  using namespace exp_poly_constants;
  const __m256 seen = _mm256_cmp_ps(x, _mm256_set1_ps(kLowest), _CMP_GE_OQ);
  const __m256 n = _mm256_floor_ps(_mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _mm256_set1_ps(0.5f)));
  __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(kC1)));
  r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(kC2)));
  __m256 y = _mm256_set1_ps(kP[0]);
  for (int i = 1; i < 6; ++i) y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP[i]));
  y = _mm256_mul_ps(y, _mm256_mul_ps(r, r));
  y = _mm256_add_ps(y, r);
  y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
  const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(exponent)), seen);
}

}  // namespace

// The last n % 8 scores are exponentiated in a padded register (−inf beyond them: +0 to their lanes).
void softmax_avx2(float* w, int64_t n) {
  const float none = -__builtin_inff();
  float top = none;
  for (int64_t j = 0; j < n; ++j) top = top < w[j] ? w[j] : top;
  if (top == none) {
    for (int64_t j = 0; j < n; ++j) w[j] = 0.0f;
    return;
  }
  const __m256 max = _mm256_set1_ps(top);
  __m256 sums = _mm256_setzero_ps();
  const int64_t full = n - n % kEntries;
  for (int64_t j = 0; j < full; j += kEntries) {
    const __m256 e = exp_poly8(_mm256_sub_ps(_mm256_loadu_ps(w + j), max));
    sums = _mm256_add_ps(sums, e);
    _mm256_storeu_ps(w + j, e);
  }
  if (full < n) {
    alignas(32) float block[kEntries] = {none, none, none, none, none, none, none, none};
    std::copy(w + full, w + n, block);
    const __m256 e = exp_poly8(_mm256_sub_ps(_mm256_load_ps(block), max));
    sums = _mm256_add_ps(sums, e);
    _mm256_store_ps(block, e);
    std::copy(block, block + (n - full), w + full);
  }
  alignas(32) float lanes[kEntries];
  _mm256_store_ps(lanes, sums);
  const float total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  const __m256 divisor = _mm256_set1_ps(total);
  int64_t j = 0;
  for (; j + kEntries <= n; j += kEntries) _mm256_storeu_ps(w + j, _mm256_div_ps(_mm256_loadu_ps(w + j), divisor));
  for (; j < n; ++j) w[j] /= total;
}

}  // namespace kvbench::attention_detail
