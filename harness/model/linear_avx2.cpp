// The AVX2 + FMA + F16C small-row kernel (see linear_kernels.h for the arithmetic every element follows).
// Compiled with -mavx2 -mfma -mf16c and called only after a CPU check, so it includes nothing but
// intrinsics: no inline library code compiled here may leak to callers on older CPUs.
#include <immintrin.h>

#include "model/linear_kernels.h"

namespace kvbench::linear_detail {

namespace {

// A block of weight rows stays in L2 (≥ 512 KiB per core on current x86) while all x rows pass it.
constexpr int64_t kBlockBytes = 256 * 1024;
constexpr int64_t kCacheLine = 64;

// How each weight type feeds one block of kBlock columns into 8 float32 lanes (linear_kernels.h):
// `load` reads a weight row's block and `load_x` an x row's, each once per tile; `fma` adds their
// products to the lanes. kWeightsFirst: whether a tile loads all its weight rows' blocks before the
// multiply-adds, or each just before its own (the same arithmetic in another instruction order; see tile).
template <WeightType T> struct Weights;
template <> struct Weights<WeightType::f32> {
  using Element = float;
  using Block = __m256;
  static constexpr int kBlock = 8;
  static constexpr bool kWeightsFirst = true;
  static Block load(const float* p) { return _mm256_loadu_ps(p); }
  static Block load_x(const float* x) { return _mm256_loadu_ps(x); }
  static __m256 fma(Block x, Block w, __m256 acc) { return _mm256_fmadd_ps(x, w, acc); }
  static float load1(const float* p) { return *p; }
};
// float16 widens 8 at a time (F16C); a block of 16 halves the loop's overhead per byte of weights, which
// at 2 bytes a weight is what limits a one-row product. Lane l takes columns l and l + 8 of each block.
template <> struct Weights<WeightType::f16> {
  using Element = uint16_t;
  struct Block {
    __m256 low, high;
  };
  static constexpr int kBlock = 16;
  static constexpr bool kWeightsFirst = false;
  static Block load(const uint16_t* p) {
    const __m256i halves = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {_mm256_cvtph_ps(_mm256_castsi256_si128(halves)), _mm256_cvtph_ps(_mm256_extracti128_si256(halves, 1))};
  }
  static Block load_x(const float* x) { return {_mm256_loadu_ps(x), _mm256_loadu_ps(x + 8)}; }
  static __m256 fma(Block x, Block w, __m256 acc) {
    return _mm256_fmadd_ps(x.high, w.high, _mm256_fmadd_ps(x.low, w.low, acc));
  }
  static float load1(const uint16_t* p) { return _cvtsh_ss(*p); }
};
// bfloat16 is the upper half of a float32. Sixteen of them fill a register as 8 pairs: a shift left
// gives the even elements, a mask the odd ones, two instructions for 16 weights. Lane l takes the pair
// (2l, 2l+1), even first; x comes with each block split into its even and odd elements to match
// (SmallRowsProblem::x_pairs).
template <> struct Weights<WeightType::bf16> {
  using Element = uint16_t;
  struct Block {
    __m256 even, odd;
  };
  static constexpr int kBlock = 16;
  static constexpr bool kWeightsFirst = true;
  static Block load(const uint16_t* p) {
    const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {_mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16)),
            _mm256_castsi256_ps(_mm256_and_si256(pairs, _mm256_set1_epi32(int(0xFFFF0000u))))};
  }
  static Block load_x(const float* x_pairs) { return {_mm256_loadu_ps(x_pairs), _mm256_loadu_ps(x_pairs + 8)}; }
  static __m256 fma(Block x, Block w, __m256 acc) {
    return _mm256_fmadd_ps(x.odd, w.odd, _mm256_fmadd_ps(x.even, w.even, acc));
  }
  static float load1(const uint16_t* p) { return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(int(*p) << 16))); }
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
  const int64_t K = p.K, K_blocks = K - K % W::kBlock;
  constexpr int64_t kLine = kCacheLine / int64_t(sizeof(typename W::Element));
  // Where the loop below prefetches the next tile's rows: one-row tiles into L2 only (T2), the others into
  // L1 (T0). One-row products over 1 GiB of weights in huge pages (model/huge_pages.h), T0 and T2 taking
  // turns in one process (Zen 4, 2 threads, 8 rounds), while the machine read 60-65 GB/s: float32
  // [4860, 896] 35-39 → 45-51 GB/s, [894, 4864] 41-45 → 46-52; while it read 33: float16 [4860, 896]
  // 22-23 → 32-33; bfloat16, in 4 KiB pages, 91 → 103-105 % of a sum's rate. Tiles of 4 rows, which
  // compute more per weight, lost 5-12 % with T2 (bench linear --cold, 4 to 64 rows).
  constexpr _mm_hint kPrefetch = R == 1 ? _MM_HINT_T2 : _MM_HINT_T0;
  const auto* w = static_cast<const typename W::Element*>(p.weight) + n0 * K;
  const float* x = (T == WeightType::bf16 ? p.x_pairs : p.x) + m0 * K;
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K_blocks; k += W::kBlock) {
    // The next tile's weight rows are fetched while this one computes: each row is a short stream
    // (K elements) that the hardware prefetcher would only pick up after it had started.
    if (k % kLine == 0)
      for (int c = 0; c < C; ++c) _mm_prefetch(reinterpret_cast<const char*>(w + (C + c) * K + k), kPrefetch);
    // float16's one-row tile (12 weight rows) cannot hold its 24 widened blocks in the 16 registers: loaded
    // first, they spilled; loaded one row at a time, each is used at once (in one process, one-row products
    // of a decode step at ~60 GB/s: 46.0 → 48.8 and 45.9 → 50.7 GB/s; no change when the machine reads at
    // 35). bfloat16, the same way, read 3–6 % slower, float32 the same, so they keep the first order.
    if constexpr (W::kWeightsFirst) {
      typename W::Block wv[C];
      for (int c = 0; c < C; ++c) wv[c] = W::load(w + c * K + k);
      for (int r = 0; r < R; ++r) {
        const typename W::Block xv = W::load_x(x + r * K + k);
        for (int c = 0; c < C; ++c) acc[r][c] = W::fma(xv, wv[c], acc[r][c]);
      }
    } else {
      typename W::Block xv[R];
      for (int r = 0; r < R; ++r) xv[r] = W::load_x(x + r * K + k);
      for (int c = 0; c < C; ++c) {
        const typename W::Block wv = W::load(w + c * K + k);
        for (int r = 0; r < R; ++r) acc[r][c] = W::fma(xv[r], wv, acc[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float s = horizontal_sum(acc[r][c]);
      for (int64_t k = K_blocks; k < K; ++k) s = fma1(x[r * K + k], W::load1(w + c * K + k), s);
      if (p.bias) s += p.bias[n0 + c];
      p.out[(m0 + r) * p.N + n0 + c] = s;
    }
}

// Register tiles: R x rows times C weight rows. One row (a decode step) wants many weight rows in flight;
// more x rows leave registers for fewer (R·C accumulators plus the weight blocks fit the 16 ymm
// registers). Every C divides kColsLcm.
// One row's tile takes 12 weight rows, though its weight blocks then spill to the stack (L1):
// - 16-bit, cold one-row products over 1 GiB (2 threads, Zen 5), C = 6 → 12: bfloat16 [9728, 896]
//   49–53 → 56–62 GB/s, [896, 4864] 47 → 48–49, [1152, 896] 39–40 → 41–42; float16 [9728, 896] 53 → 57,
//   [896, 4864] 49 → 52. 16 and 24 rows read slower than 12.
// - float32 rows of at most kShortRow bytes (K = 896: 3.5 KiB) stream briefly each; 6 of them and the
//   next tile's prefetched 6 read at 81–85 % of a sum's rate over the same GiB, 12 at 96–98 % (Zen 4,
//   2 threads, medians of 8–12 alternating rounds). Longer float32 rows keep 6: at K = 16384, 12 rows and
//   the next 12 read at 76 % of the sum's rate, 6 and 6 at 105 %; from K = 2048 to 8960 within noise.
constexpr int kTileRows = 4, kColsLcm = 12, kOneRowCols = 12;
constexpr int64_t kShortRow = 4096;
template <WeightType T>
constexpr int tile_cols(int64_t rows, int64_t row_bytes) {
  if (rows == 1) return T != WeightType::f32 || row_bytes <= kShortRow ? kOneRowCols : 6;
  if (T != WeightType::f32) return rows == 2 ? 3 : 2;  // their blocks take 2 registers
  return rows == 2 ? 4 : 3;
}

using TileFn = void (*)(const SmallRowsProblem&, int64_t, int64_t);

// The widest tile of R rows up to C columns that fits `cols`.
template <WeightType T, int R, int C>
TileFn tile_for_cols(int64_t cols) {
  if constexpr (C == 1) {
    return tile<T, R, 1>;
  } else {
    return cols >= C ? tile<T, R, C> : tile_for_cols<T, R, C - 1>(cols);
  }
}

template <WeightType T>
TileFn tile_for(int64_t rows, int64_t cols) {
  switch (rows) {
    case 1: return tile_for_cols<T, 1, kOneRowCols>(cols);
    case 2: return tile_for_cols<T, 2, tile_cols<T>(2, 0)>(cols);
    case 3: return tile_for_cols<T, 3, tile_cols<T>(3, 0)>(cols);
    default: return tile_for_cols<T, 4, tile_cols<T>(4, 0)>(cols);
  }
}

int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

template <WeightType T>
void run(const SmallRowsProblem& p, int64_t n_begin, int64_t n_end) {
  const int64_t row_bytes = p.K * int64_t(sizeof(typename Weights<T>::Element));
  const int64_t fit = row_bytes > 0 ? kBlockBytes / row_bytes : kBlockBytes;
  const int64_t block = fit > kColsLcm ? fit - fit % kColsLcm : kColsLcm;
  for (int64_t nb = n_begin; nb < n_end; nb += block) {
    const int64_t nb_end = smaller(nb + block, n_end);
    for (int64_t m = 0; m < p.rows; m += kTileRows) {
      const int64_t rows = smaller(kTileRows, p.rows - m);
      const int64_t cols = tile_cols<T>(rows, row_bytes);
      for (int64_t n = nb; n < nb_end; n += cols) tile_for<T>(rows, smaller(cols, nb_end - n))(p, m, n);
    }
  }
}

}  // namespace

void widen_f16_avx2(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < n; ++i) out[i] = _cvtsh_ss(in[i]);
}

void widen_bf16_avx2(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16)));
  }
  for (; i < n; ++i) out[i] = _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(int(in[i]) << 16)));
}

void narrow_f16_avx2(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) out[i] = _cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT);
}

void small_rows_avx2(const SmallRowsProblem& p, int64_t n_begin, int64_t n_end) {
  switch (p.type) {
    case WeightType::f32: return run<WeightType::f32>(p, n_begin, n_end);
    case WeightType::bf16: return run<WeightType::bf16>(p, n_begin, n_end);
    case WeightType::f16: return run<WeightType::f16>(p, n_begin, n_end);
  }
}

}  // namespace kvbench::linear_detail
