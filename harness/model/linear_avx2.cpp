// The AVX2 + FMA + F16C small-row kernel (see linear_kernels.h for the arithmetic every element follows).
// Compiled with -mavx2 -mfma -mf16c and called only after a CPU check, so it includes nothing but
// intrinsics: no inline library code compiled here may leak to callers on older CPUs.
#include <immintrin.h>

#include "model/linear_kernels.h"

namespace kvbench::linear_detail {

namespace {

// Register tile: kTileRows x rows times kTileCols weight rows = 12 accumulators of 8 lanes, plus the
// weight vectors, fill the 16 ymm registers (x is read as a memory operand of the FMA).
constexpr int kTileRows = 4, kTileCols = 3;
// A block of weight rows stays in L2 (≥ 512 KiB per core on current x86) while all x rows pass it.
constexpr int64_t kBlockBytes = 256 * 1024;

template <WeightType T> struct Weights;
template <> struct Weights<WeightType::f32> {
  using Element = float;
  static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
  static float load1(const float* p) { return *p; }
};
template <> struct Weights<WeightType::bf16> {
  using Element = uint16_t;
  // bfloat16 is the upper half of a float32: widen and shift.
  static __m256 load8(const uint16_t* p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static float load1(const uint16_t* p) { return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(int(*p) << 16))); }
};
template <> struct Weights<WeightType::f16> {
  using Element = uint16_t;
  static __m256 load8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static float load1(const uint16_t* p) { return _cvtsh_ss(*p); }
};

float fma1(float a, float b, float c) {
  return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
}

// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), the order linear_kernels.h fixes.
float horizontal_sum(__m256 v) {
  const __m128 quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 1)));
}

// out[m0 .. m0+R, n0 .. n0+C].
template <WeightType T, int R, int C>
void tile(const SmallRowsProblem& p, int64_t m0, int64_t n0) {
  using W = Weights<T>;
  const int64_t K = p.K, K8 = K - K % 8;
  const auto* w = static_cast<const typename W::Element*>(p.weight) + n0 * K;
  const float* x = p.x + m0 * K;
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K8; k += 8) {
    // The next tile's weight rows are fetched while this one computes: each row is a short stream
    // (K elements) that the hardware prefetcher would only pick up after it had started.
    if (k % 16 == 0)
      for (int c = 0; c < C; ++c) _mm_prefetch(reinterpret_cast<const char*>(w + (C + c) * K + k), _MM_HINT_T0);
    __m256 wv[C];
    for (int c = 0; c < C; ++c) wv[c] = W::load8(w + c * K + k);
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_loadu_ps(x + r * K + k);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float s = horizontal_sum(acc[r][c]);
      for (int64_t k = K8; k < K; ++k) s = fma1(x[r * K + k], W::load1(w + c * K + k), s);
      if (p.bias) s += p.bias[n0 + c];
      p.out[(m0 + r) * p.N + n0 + c] = s;
    }
}

using TileFn = void (*)(const SmallRowsProblem&, int64_t, int64_t);

template <WeightType T, int R>
constexpr TileFn tile_for_cols(int64_t cols) {
  return cols == 1 ? tile<T, R, 1> : cols == 2 ? tile<T, R, 2> : tile<T, R, 3>;
}

template <WeightType T>
TileFn tile_for(int64_t rows, int64_t cols) {
  switch (rows) {
    case 1: return tile_for_cols<T, 1>(cols);
    case 2: return tile_for_cols<T, 2>(cols);
    case 3: return tile_for_cols<T, 3>(cols);
    default: return tile_for_cols<T, 4>(cols);
  }
}

int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

template <WeightType T>
void run(const SmallRowsProblem& p, int64_t n_begin, int64_t n_end) {
  const int64_t row_bytes = p.K * int64_t(sizeof(typename Weights<T>::Element));
  const int64_t fit = row_bytes > 0 ? kBlockBytes / row_bytes : kBlockBytes;
  const int64_t block = fit > kTileCols ? fit - fit % kTileCols : kTileCols;
  for (int64_t nb = n_begin; nb < n_end; nb += block) {
    const int64_t nb_end = smaller(nb + block, n_end);
    for (int64_t m = 0; m < p.rows; m += kTileRows) {
      const int64_t rows = smaller(kTileRows, p.rows - m);
      for (int64_t n = nb; n < nb_end; n += kTileCols) tile_for<T>(rows, smaller(kTileCols, nb_end - n))(p, m, n);
    }
  }
}

}  // namespace

void small_rows_avx2(const SmallRowsProblem& p, int64_t n_begin, int64_t n_end) {
  switch (p.type) {
    case WeightType::f32: return run<WeightType::f32>(p, n_begin, n_end);
    case WeightType::bf16: return run<WeightType::bf16>(p, n_begin, n_end);
    case WeightType::f16: return run<WeightType::f16>(p, n_begin, n_end);
  }
}

}  // namespace kvbench::linear_detail
