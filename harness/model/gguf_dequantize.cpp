#include "model/gguf_dequantize.h"

#include <ATen/Parallel.h>
#include <c10/util/Half.h>

#include <fmt/ranges.h>

#include <array>
#include <cstring>
#include <map>
#include <optional>

#include "common/error.h"

namespace kvbench {

namespace {

// The arithmetic is ggml's and numpy's, operation for operation. Every product here is exact in float32 (an
// fp16 scale has 11 significant bits, a 6-bit sub-scale and a quant at most 13 more), so only the final sum
// rounds, and an FMA contraction of `d * q + m` (one rounding) gives the same bits: no -ffp-contract=off is
// needed (built with -mfma -ffp-contract=fast, the file still matched gguf's dequantize bit for bit).

float half_at(const std::uint8_t* p) {
  std::uint16_t bits;
  std::memcpy(&bits, p, 2);
  return static_cast<float>(c10::Half(bits, c10::Half::from_bits()));
}

std::uint32_t u32_at(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The 32 quants of a Q4_0/Q4_1/Q5_0/Q5_1 block: element j < 16 is the low nibble of qs[j], element j + 16
// its high nibble; Q5's fifth bit of element j is bit j of qh (0 for Q4).
std::array<int, 32> legacy_quants(const std::uint8_t* qs, std::uint32_t qh) {
  std::array<int, 32> q;
  for (int j = 0; j < 16; ++j) {
    q[j] = (qs[j] & 0x0F) | (((qh >> j) & 1) << 4);
    q[j + 16] = (qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
  }
  return q;
}

// Q4_0, Q5_0: y = (q − offset)·d.
void symmetric(const std::array<int, 32>& q, int offset, float d, float* y) {
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(q[j] - offset) * d;
}

// Q4_1, Q5_1: y = q·d + m.
void affine(const std::array<int, 32>& q, float d, float m, float* y) {
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(q[j]) * d + m;
}

// block_q4_0 {half d; u8 qs[16]}
void q4_0(const std::uint8_t* b, float* y) { symmetric(legacy_quants(b + 2, 0), 8, half_at(b), y); }
// block_q4_1 {half d, m; u8 qs[16]}
void q4_1(const std::uint8_t* b, float* y) { affine(legacy_quants(b + 4, 0), half_at(b), half_at(b + 2), y); }
// block_q5_0 {half d; u8 qh[4]; u8 qs[16]}
void q5_0(const std::uint8_t* b, float* y) { symmetric(legacy_quants(b + 6, u32_at(b + 2)), 16, half_at(b), y); }
// block_q5_1 {half d, m; u8 qh[4]; u8 qs[16]}
void q5_1(const std::uint8_t* b, float* y) {
  affine(legacy_quants(b + 8, u32_at(b + 4)), half_at(b), half_at(b + 2), y);
}

// block_q8_0 {half d; i8 qs[32]}
void q8_0(const std::uint8_t* b, float* y) {
  const float d = half_at(b);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(static_cast<std::int8_t>(b[2 + j])) * d;
}

// The 6-bit scale and min of sub-block j (of 8) packed in Q4_K/Q5_K's 12 scale bytes (ggml's get_scale_min_k4).
std::pair<int, int> k_scale_min(int j, const std::uint8_t* s) {
  if (j < 4) return {s[j] & 63, s[j + 4] & 63};
  return {(s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4)};
}

// Q4_K and Q5_K: 8 sub-blocks of 32, y = (d·scale)·q − dmin·min. Each 32 bytes of qs hold two sub-blocks (low
// nibbles, then high); Q5_K's fifth bit of element l of sub-block s is bit s of qh[l] (qh null for Q4_K).
void k_quants(const std::uint8_t* b, const std::uint8_t* qh, const std::uint8_t* qs, float* y) {
  const float d = half_at(b), dmin = half_at(b + 2);
  const std::uint8_t* scales = b + 4;
  for (int s = 0; s < 8; ++s, y += 32) {
    const auto [scale, min] = k_scale_min(s, scales);
    const float ds = d * static_cast<float>(scale), ms = dmin * static_cast<float>(min);
    const std::uint8_t* nibbles = qs + 32 * (s / 2);
    const int shift = (s % 2) * 4;
    for (int l = 0; l < 32; ++l) {
      const int high = qh ? ((qh[l] >> s) & 1) << 4 : 0;
      y[l] = ds * static_cast<float>(((nibbles[l] >> shift) & 0x0F) | high) - ms;
    }
  }
}

// block_q4_K {half d, dmin; u8 scales[12]; u8 qs[128]}
void q4_k(const std::uint8_t* b, float* y) { k_quants(b, nullptr, b + 16, y); }
// block_q5_K {half d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}
void q5_k(const std::uint8_t* b, float* y) { k_quants(b, b + 16, b + 48, y); }

// block_q6_K {u8 ql[128]; u8 qh[64]; i8 scales[16]; half d}: two halves of 128; in each, element 32·k + l
// (k < 4) takes the low (k < 2) or high nibble of ql[l + 32·(k % 2)], bits 2k..2k+1 of qh[l] above it, minus
// 32, and scale l / 16 + 2k; y = (d·scale)·q.
void q6_k(const std::uint8_t* b, float* y) {
  const float d = half_at(b + 208);
  for (int half = 0; half < 2; ++half, y += 128) {
    const std::uint8_t* ql = b + 64 * half;
    const std::uint8_t* qh = b + 128 + 32 * half;
    const auto* sc = reinterpret_cast<const std::int8_t*>(b + 192 + 8 * half);
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) {
        const int low = (ql[l + 32 * (k % 2)] >> (4 * (k / 2))) & 0x0F;
        const int q = (low | (((qh[l] >> (2 * k)) & 3) << 4)) - 32;
        y[32 * k + l] = d * static_cast<float>(sc[l / 16 + 2 * k]) * static_cast<float>(q);
      }
  }
}

struct BlockCodec {
  std::int64_t elements;  // per block; the bytes per block are the file's (GgufTensor::bytes)
  void (*decode)(const std::uint8_t* block, float* out);
};

const std::map<GgmlType, BlockCodec>& block_codecs() {
  static const std::map<GgmlType, BlockCodec> codecs = {
      {GgmlType::Q4_0, {32, q4_0}}, {GgmlType::Q4_1, {32, q4_1}},  {GgmlType::Q5_0, {32, q5_0}},
      {GgmlType::Q5_1, {32, q5_1}}, {GgmlType::Q8_0, {32, q8_0}},  {GgmlType::Q4_K, {256, q4_k}},
      {GgmlType::Q5_K, {256, q5_k}}, {GgmlType::Q6_K, {256, q6_k}}};
  return codecs;
}

// F32, F16 and BF16 are stored as themselves; their float32 values are ATen's exact widening.
std::optional<at::ScalarType> float_type(GgmlType type) {
  switch (type) {
    case GgmlType::F32: return at::kFloat;
    case GgmlType::F16: return at::kHalf;
    case GgmlType::BF16: return at::kBFloat16;
    default: return std::nullopt;
  }
}

at::Tensor decode_blocks(const GgufTensor& t, const BlockCodec& codec) {
  at::Tensor out = at::empty(torch_shape(t), at::kFloat);
  const std::int64_t blocks = t.elements() / codec.elements;
  const std::size_t stride = t.bytes / static_cast<std::size_t>(blocks);
  float* y = out.data_ptr<float>();
  at::parallel_for(0, blocks, 1024, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) codec.decode(t.data + i * stride, y + i * codec.elements);
  });
  return out;
}

}  // namespace

std::vector<std::int64_t> torch_shape(const GgufTensor& t) { return {t.dims.rbegin(), t.dims.rend()}; }

bool gguf_type_supported(GgmlType type) { return float_type(type) || block_codecs().count(type) > 0; }

std::string gguf_supported_types() {
  std::vector<std::string> names = {"F32", "F16", "BF16"};
  for (const auto& [type, codec] : block_codecs()) names.push_back(ggml_type_name(type));
  return fmt::format("{}", fmt::join(names, ", "));
}

at::Tensor dequantize(const GgufTensor& t, const std::filesystem::path& file) {
  if (!gguf_type_supported(t.type) || t.bytes == 0)
    fail("{}: tensor \"{}\": quantization type {} is not supported (kvbench reads {})", file.string(), t.name,
         ggml_type_name(t.type), gguf_supported_types());
  if (const auto stored = float_type(t.type))
    return at::from_blob(const_cast<std::uint8_t*>(t.data), torch_shape(t), at::TensorOptions().dtype(*stored))
        .to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  return decode_blocks(t, block_codecs().at(t.type));
}

}  // namespace kvbench
