#include "model/model.h"

#include <torch/version.h>
#if KVBENCH_CUDA
#include <torch/cuda.h>
#endif

#include <cmath>
#include <limits>

#include "common/error.h"
#include "model/block_attention.h"
#include "model/decode_attention.h"
#include "model/fused_ops.h"
#include "model/linear.h"
#include "model/sdpa_attention.h"
#include "model/weights.h"

namespace kvbench {

namespace {

// Norms, RoPE, softmax and logits run in float32 for 16-bit models; a float64 model stays float64
// throughout, so gradient checks against finite differences see no float32 rounding.
at::ScalarType compute_dtype(const at::Tensor& x) { return x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat; }

// allowed[t, j]: new token t (after `cached` entries) sees every cached entry and the new tokens up to itself.
at::Tensor causal_mask(int64_t T, int64_t cached, at::Device device) {
  const auto longs = at::TensorOptions().device(device).dtype(at::kLong);
  return at::arange(cached + T, longs).unsqueeze(0) <= (at::arange(T, longs) + cached).unsqueeze(1);
}

// One layer's mask over its N keys: `causal` (every cached entry visible; computed for the widest layer,
// so redone when a ragged layer holds fewer), and, where a ragged layer has padding, only slots that
// hold an entry ([B, KV, T, N]). Undefined when nothing is masked.
at::Tensor layer_mask(const at::Tensor& causal, const at::Tensor& held, int64_t N) {
  at::Tensor mask = causal;
  if (causal.defined() && causal.size(1) != N) mask = causal_mask(causal.size(0), N - causal.size(0), causal.device());
  if (!held.defined()) return mask;
  return mask.defined() ? held.unsqueeze(2).logical_and(mask) : held.unsqueeze(2);
}

// The token before each of ids [B, T]: `last` [B] (the sequence's newest token so far, −1 if none), then ids.
at::Tensor previous_token_ids(const at::Tensor& last, const at::Tensor& ids) {
  return at::cat({last.to(ids.device()).unsqueeze(1), ids.narrow(1, 0, ids.size(1) - 1)}, 1);
}

// RoPE inverse frequencies, with Llama 3.1's piecewise rescaling of long wavelengths when configured,
// computed as transformers computes them: the same float32 ATen operations in the same order (Python's
// `a / t` is t.reciprocal() * a, `a ** t` is pow(a, t), `1 - t` is rsub(t, 1)). Checkpoints are trained and
// run with these values; correctly rounded ones (from double) differ by up to 3 ulps, which moves logits by
// ~3e-3 at position 16K (tests/core/test_hf_reference.cpp).
at::Tensor inverse_frequencies(const ModelConfig& c) {
  const at::Tensor exponent = at::arange(0, c.head_dim, 2, at::kLong).to(at::kFloat) / c.head_dim;
  const at::Tensor inv = at::reciprocal(at::pow(c.rope_theta, exponent)) * 1.0;
  if (!c.rope_scaling) return inv;
  const auto& s = *c.rope_scaling;
  const double old_len = static_cast<double>(s.original_max_position_embeddings);
  const double low_wavelen = old_len / s.low_freq_factor, high_wavelen = old_len / s.high_freq_factor;
  const at::Tensor wavelen = at::reciprocal(inv) * (2 * M_PI);
  const at::Tensor scaled = at::where(wavelen > low_wavelen, inv / s.factor, inv);
  const at::Tensor smooth =
      (at::reciprocal(wavelen) * old_len - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  const at::Tensor smoothed = at::rsub(smooth, 1) * scaled / s.factor + smooth * scaled;
  const at::Tensor medium = (wavelen < high_wavelen).logical_not().logical_and((wavelen > low_wavelen).logical_not());
  return at::where(medium, smoothed, scaled);
}

at::Tensor pack(const std::vector<at::Tensor>& parts) { return parts.size() == 1 ? parts.front() : at::cat(parts); }

// forward(groups) packs every group's new tokens as rows of one matrix [M, ...]: group g owns rows
// [offset[g], offset[g + 1]). Each group's RoPE table is computed over its own positions (the same values
// as when it runs alone). Constructing it starts every group's cache append.
struct PackedGroups {
  PackedGroups(const Model& model, const std::vector<StepInput>& groups);
  int64_t count(size_t g) const { return offset[g + 1] - offset[g]; }
  at::Tensor flat(const at::Tensor& packed, size_t g) const;  // group g's rows [count, ...]
  at::Tensor rows(const at::Tensor& packed, size_t g) const;  // the same as [B, T, ...]

  const std::vector<StepInput>& groups;
  std::vector<int64_t> offset{0};
  RowSegments segments;              // each group's row count
  at::Tensor embedded;               // [M, hidden]
  at::Tensor previous_ids;           // [M], the token before each row (key_smear models only)
  Rotary rotary;                     // [M, 1, D] tables
  std::vector<at::Tensor> allowed;   // causal masks of groups with several new tokens
  std::vector<bool> decoding;        // one new token per sequence: the decode attention kernel serves it
};

PackedGroups::PackedGroups(const Model& model, const std::vector<StepInput>& groups_in) : groups(groups_in) {
  std::vector<at::Tensor> rows, previous, cos, sin;
  for (const StepInput& g : groups) {
    const int64_t T = g.ids.size(1);
    rows.push_back(model.embed(g.ids).flatten(0, 1));
    if (model.config().key_smear) previous.push_back(previous_token_ids(g.cache->last_token_ids(), g.ids).flatten());
    offset.push_back(offset.back() + g.ids.numel());
    segments.push_back(g.ids.numel());
    allowed.push_back(T > 1 ? causal_mask(T, g.cache->size(), g.ids.device()) : at::Tensor());
    const Rotary r = model.rotary(g.positions);
    cos.push_back(r.cos.flatten(0, 1).unsqueeze(1));  // [rows, 1, D] against [rows, heads, D]
    sin.push_back(r.sin.flatten(0, 1).unsqueeze(1));
    g.cache->begin_append(T);
  }
  embedded = pack(rows);
  if (!previous.empty()) previous_ids = pack(previous);
  rotary = {pack(cos), pack(sin)};
  for (const StepInput& g : groups) decoding.push_back(g.ids.size(1) == 1 && decode_attention_supported(embedded));
}

at::Tensor PackedGroups::flat(const at::Tensor& packed, size_t g) const {
  return packed.narrow(0, offset[g], count(g));
}

at::Tensor PackedGroups::rows(const at::Tensor& packed, size_t g) const {
  return flat(packed, g).unflatten(0, {groups[g].ids.size(0), groups[g].ids.size(1)});
}

// One layer's attention for forward(groups): each group appends its new keys/values (k, v: [M, KV, D], rows
// packed) to its own cache and attends over it — decode groups in one call of the decode kernel, the others
// by Model::attend with their causal mask. Returns the attended rows packed as q's [M, H * D]; the captured
// probabilities go to `results`.
at::Tensor attend_groups(const Model& model, const PackedGroups& packed, int64_t layer, const at::Tensor& q,
                         const at::Tensor& k, const at::Tensor& v, std::vector<ForwardResult>& results) {
  const std::vector<StepInput>& groups = packed.groups;
  const int64_t heads = model.config().num_heads;
  const bool last = layer == model.config().num_layers - 1;
  std::vector<at::Tensor> attended(groups.size()), decode_queries;
  std::vector<DecodeAttentionGroup> decode_groups;
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto [keys, values] =
        groups[g].cache->append_layer(layer, packed.rows(k, g).transpose(1, 2), packed.rows(v, g).transpose(1, 2));
    // A ragged cache's padding slots (a layer padded to its fullest head) are never attended.
    const at::Tensor held = groups[g].cache->attention_mask(layer);  // [B, KV, N] or undefined
    const AttentionCapture capture = groups[g].options.attention;
    const bool keep = capture == AttentionCapture::AllLayers || (capture == AttentionCapture::LastLayer && last);
    at::Tensor probs;
    if (packed.decoding[g]) {
      if (keep) probs = at::empty({keys.size(0), heads, 1, keys.size(2)}, keys.options().dtype(at::kFloat));
      decode_groups.push_back({keys, values, probs, held});
      decode_queries.push_back(packed.flat(q, g));
    } else {
      const at::Tensor mask = layer_mask(packed.allowed[g], held, keys.size(2));
      attended[g] = model.attend(packed.rows(q, g).transpose(1, 2), keys, values, mask, keep ? &probs : nullptr)
                        .flatten(0, 1);
    }
    if (keep) results[g].attention.push_back(probs);
  }
  // Decode groups (one new token per sequence) share one call of the decode attention kernel.
  if (!decode_groups.empty()) {
    const at::Tensor out = decode_attention(pack(decode_queries), decode_groups);
    for (size_t g = 0, row = 0; g < groups.size(); ++g)
      if (packed.decoding[g]) {
        attended[g] = out.narrow(0, row, packed.count(g));
        row += packed.count(g);
      }
  }
  return pack(attended);
}

// The LM head runs once over the rows whose logits are wanted: every row, or each sequence's last.
void group_logits(const Model& model, const PackedGroups& packed, const at::Tensor& x,
                  std::vector<ForwardResult>& results) {
  std::vector<at::Tensor> wanted;
  RowSegments segments;
  for (size_t g = 0; g < packed.groups.size(); ++g) {
    const at::Tensor group_rows = packed.rows(x, g);
    const int64_t T = group_rows.size(1);
    wanted.push_back((packed.groups[g].options.all_logits ? group_rows : group_rows.narrow(1, T - 1, 1)).flatten(0, 1));
    segments.push_back(wanted.back().size(0));
  }
  const at::Tensor all = model.logits(pack(wanted), segments);
  for (size_t g = 0, begin = 0; g < packed.groups.size(); ++g) {
    const int64_t B = packed.groups[g].ids.size(0), count = wanted[g].size(0);
    results[g].logits = all.narrow(0, begin, count).view({B, count / B, all.size(-1)});
    begin += count;
  }
}

}  // namespace

Model Model::load(const std::filesystem::path& model, at::Device device, at::ScalarType dtype) {
  ModelConfig config = load_model_config(model);
  ModelWeights weights = load_weights(model, config, device, dtype);
  return from_weights(std::move(config), std::move(weights));
}

Model Model::from_weights(ModelConfig config, ModelWeights weights) {
  Model m;
  m.config_ = std::move(config);
  m.weights_ = std::move(weights);
  m.inv_freq_ = inverse_frequencies(m.config_).to(m.weights_.embed_tokens.device());
  return m;
}

at::Tensor Model::embed(const at::Tensor& ids) const { return at::embedding(weights_.embed_tokens, ids); }

at::Tensor Model::rms_norm(const at::Tensor& x, const at::Tensor& weight) const {
  if (fused_ops_apply(x, weight))
    if (at::Tensor fused = fused_rms_norm(x, weight, config_.rms_norm_eps); fused.defined()) return fused;
  // As HF: normalise in float32, cast back, then scale (the order matters in bf16).
  const at::Tensor xf = x.to(compute_dtype(x));
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + config_.rms_norm_eps);
  return weight * normed.to(x.scalar_type());
}

Rotary Model::rotary(const at::Tensor& positions) const {
  const at::Tensor angles = positions.to(at::kFloat).unsqueeze(-1) * inv_freq_;  // [B, T, D/2]
  return {at::cat({angles.cos(), angles.cos()}, -1), at::cat({angles.sin(), angles.sin()}, -1)};
}

at::Tensor Model::rotate(const at::Tensor& x, const Rotary& r) const {
  if (fused_ops_apply(x, r.cos))
    if (at::Tensor fused = fused_rotate(x, r.cos, r.sin); fused.defined()) return fused;
  // HF's rotate_half convention (halves, not interleaved pairs).
  const at::Tensor xf = x.to(compute_dtype(x));
  const int64_t half = x.size(-1) / 2;
  const at::Tensor rotated = at::cat({-xf.narrow(-1, half, half), xf.narrow(-1, 0, half)}, -1);
  return (xf * r.cos + rotated * r.sin).to(x.scalar_type());
}

at::Tensor Model::rope(const at::Tensor& x, const at::Tensor& positions) const {
  const Rotary r = rotary(positions);  // [B, T, D] against x [B, heads, T, D]
  return rotate(x, {r.cos.unsqueeze(1), r.sin.unsqueeze(1)});
}

at::Tensor Model::split_heads(const at::Tensor& projected, int64_t heads, const at::Tensor& norm) const {
  const at::Tensor split = projected.unflatten(-1, {heads, config_.head_dim});
  return config_.qk_norm && norm.defined() ? rms_norm(split, norm) : split;
}

at::Tensor Model::query_heads(int64_t layer, const at::Tensor& normed, const RowSegments& segments, bool q_norm) const {
  const LayerWeights& w = weights_.layers[layer];
  return split_heads(linear(normed, {{w.q_proj, w.q_bias}}, segments).front(), config_.num_heads,
                     q_norm ? w.q_norm : at::Tensor());
}

at::Tensor Model::query(int64_t layer, const at::Tensor& normed, const at::Tensor& positions) const {
  return rope(query_heads(layer, normed).transpose(1, 2), positions);
}

QueryKeyValue Model::project_heads(int64_t layer, const at::Tensor& normed, const RowSegments& segments) const {
  const LayerWeights& w = weights_.layers[layer];
  const std::vector<at::Tensor> qkv =
      linear(normed, {{w.q_proj, w.q_bias}, {w.k_proj, w.k_bias}, {w.v_proj, w.v_bias}}, segments);
  return {split_heads(qkv[0], config_.num_heads, w.q_norm), split_heads(qkv[1], config_.num_kv_heads, w.k_norm),
          split_heads(qkv[2], config_.num_kv_heads, at::Tensor())};
}

// Layer 0's input is the embedding, so the previous token's key is a function of its id alone: the smear
// needs only the id, which the cache keeps through eviction. With it one layer can do induction ("find the
// earlier match, copy what followed"), which two plain layers of a model this small learn too slowly on CPU.
at::Tensor Model::smear_keys(const at::Tensor& k, const at::Tensor& previous_ids, const RowSegments& segments) const {
  const LayerWeights& w = weights_.layers.front();
  const at::Tensor previous_normed = rms_norm(embed(previous_ids.clamp_min(0)), w.input_norm);
  at::Tensor previous =
      split_heads(linear(previous_normed, {{w.k_proj, w.k_bias}}, segments).front(), config_.num_kv_heads, w.k_norm);
  previous = at::where(previous_ids.ge(0).unsqueeze(-1).unsqueeze(-1), previous, k);
  // The gate in float32, rounded once to k's dtype (libtorch 1.13 has no CPU float16 sigmoid).
  const at::Tensor gate = at::sigmoid(w.k_smear.to(compute_dtype(w.k_smear))).to(k.scalar_type());
  return k + gate.unsqueeze(-1) * (previous - k);
}

QueryKeyValue Model::project(int64_t layer, const at::Tensor& normed, const at::Tensor& positions,
                             const at::Tensor& previous_ids) const {
  QueryKeyValue heads = project_heads(layer, normed);
  if (layer == 0 && config_.key_smear) heads.k = smear_keys(heads.k, previous_ids);
  return {rope(heads.q.transpose(1, 2), positions), rope(heads.k.transpose(1, 2), positions), heads.v.transpose(1, 2)};
}

at::Tensor Model::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed,
                         at::Tensor* probs_out) const {
  if (!aten_matmul_supported(q.options()))
    return attend(q.to(at::kFloat), k.to(at::kFloat), v.to(at::kFloat), allowed, probs_out).to(at::kHalf);
  if (!probs_out && sdpa_serves(q)) return sdpa_attention(q, k, v, allowed);
  if (block_attention_supported(q, k, v)) return block_attention(q, k, v, allowed, probs_out);
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3);
  const int64_t KV = k.size(1), G = H / KV, N = k.size(2);
  // Query heads of one KV group are stacked along the row axis, so one matmul per KV head serves them all.
  const at::Tensor grouped = q.reshape({B, KV, G * T, D});
  at::Tensor scores = at::matmul(grouped, k.transpose(-1, -2)).to(compute_dtype(q)) / std::sqrt(static_cast<double>(D));
  scores = scores.view({B, KV, G, T, N});
  at::Tensor probs;
  if (allowed.defined()) {
    const at::Tensor mask = allowed.dim() == 4 ? allowed.reshape({B, KV, 1, T, N})  // per KV head: ragged caches
                                               : allowed.reshape({allowed.dim() == 3 ? allowed.size(0) : 1, 1, 1, T, N});
    scores.masked_fill_(mask.logical_not(), -std::numeric_limits<float>::infinity());
    probs = at::softmax(scores, -1);
    const at::Tensor has_key = mask.any(-1, /*keepdim=*/true);
    if (!has_key.all().item<bool>()) probs.masked_fill_(has_key.logical_not(), 0.0);  // rows with no key → 0
  } else {
    probs = at::softmax(scores, -1);
  }
  if (probs_out) *probs_out = probs.view({B, H, T, N});
  const at::Tensor out = at::matmul(probs.to(v.scalar_type()).view({B, KV, G * T, N}), v);  // [B, KV, G*T, D]
  return out.view({B, H, T, D}).transpose(1, 2).reshape({B, T, H * D});
}

at::Tensor Model::attention_residual(int64_t layer, const at::Tensor& x, const at::Tensor& attended,
                                     const RowSegments& segments) const {
  const LayerWeights& w = weights_.layers[layer];
  return linear_residual(attended, {w.o_proj, w.o_bias}, x, segments);
}

at::Tensor Model::mlp_residual(int64_t layer, const at::Tensor& x, const RowSegments& segments) const {
  const LayerWeights& w = weights_.layers[layer];
  const at::Tensor gated =
      linear_swiglu(rms_norm(x, w.post_attention_norm), {w.gate_proj, w.gate_bias}, {w.up_proj, w.up_bias}, segments);
  return linear_residual(gated, {w.down_proj, w.down_bias}, x, segments);
}

at::Tensor Model::logits(const at::Tensor& x, const RowSegments& segments) const {
  const at::Tensor out = kvbench::linear(rms_norm(x, weights_.final_norm), {{weights_.lm_head, {}}}, segments).front();
  return out.to(compute_dtype(out));
}

ForwardResult Model::forward(const at::Tensor& ids, const at::Tensor& positions, KvCache& cache,
                             const ForwardOptions& options) const {
  return std::move(forward({StepInput{ids, positions, &cache, options}}).front());
}

std::vector<ForwardResult> Model::forward(const std::vector<StepInput>& groups) const {
  const PackedGroups packed(*this, groups);
  std::vector<ForwardResult> results(groups.size());
  const RowSegments& segments = packed.segments;
  at::Tensor x = packed.embedded, last_layer_input;  // every group's new tokens, rows of one matrix [M, hidden]
  for (int64_t l = 0; l < config_.num_layers; ++l) {
    if (l == config_.num_layers - 1) last_layer_input = x;
    const at::Tensor normed = rms_norm(x, weights_.layers[l].input_norm);
    QueryKeyValue heads = project_heads(l, normed, segments);
    if (l == 0 && config_.key_smear) heads.k = smear_keys(heads.k, packed.previous_ids, segments);
    for (size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].options.queries) results[g].queries.push_back(packed.rows(heads.q, g).transpose(1, 2));
      if (groups[g].options.attention_inputs) results[g].attention_inputs.push_back(packed.rows(normed, g));
    }
    const at::Tensor q = rotate(heads.q, packed.rotary), k = rotate(heads.k, packed.rotary);  // [M, heads, D]
    x = attention_residual(l, x, attend_groups(*this, packed, l, q, k, heads.v, results), segments);
    x = mlp_residual(l, x, segments);
  }
  for (size_t g = 0; g < groups.size(); ++g)
    groups[g].cache->end_append(groups[g].ids, groups[g].positions, packed.rows(last_layer_input, g));
  group_logits(*this, packed, x, results);
  return results;
}

at::Tensor Model::forward_sequence(const at::Tensor& ids, const at::Tensor& positions,
                                   std::vector<QueryKeyValue>* layers) const {
  const at::Tensor allowed = causal_mask(ids.size(1), 0, ids.device());
  const at::Tensor previous_ids = previous_token_ids(at::full({ids.size(0)}, -1, ids.options()), ids);
  at::Tensor x = embed(ids);
  for (int64_t l = 0; l < config_.num_layers; ++l) {
    const QueryKeyValue qkv = project(l, rms_norm(x, weights_.layers[l].input_norm), positions, previous_ids);
    x = mlp_residual(l, attention_residual(l, x, attend(qkv.q, qkv.k, qkv.v, allowed)));
    if (layers) layers->push_back(qkv);
  }
  return logits(x);
}

int cuda_device_count() {
#if KVBENCH_CUDA
  return static_cast<int>(torch::cuda::device_count());
#else
  return 0;  // a CPU-only link (cmake/torch.cmake) has no torch::cuda
#endif
}

at::Device parse_device(const std::string& text) {
  const at::Device device = [&] {
    try {
      return at::Device(text);
    } catch (const std::exception&) {
      fail("unknown device \"{}\" (expected cpu, cuda or cuda:N)", text);
    }
  }();
  if (!device.is_cuda()) return device;
  if (!KVBENCH_CUDA)
    fail("--device {}: this kvbench is built without CUDA (libtorch {}); build it against a CUDA PyTorch with nvcc "
         "installed (README: which torch to build against)", text, TORCH_VERSION);
  const int count = cuda_device_count();
  if (count == 0) fail("--device {}: no CUDA device is visible on this machine (CUDA is compiled in; check "
                       "nvidia-smi and CUDA_VISIBLE_DEVICES)", text);
  if (device.has_index() && device.index() >= count)
    fail("--device {}: only {} CUDA device(s) are visible (cuda:0 … cuda:{})", text, count, count - 1);
  return device;
}

at::ScalarType parse_dtype(const std::string& text) {
  if (text == "float32" || text == "fp32" || text == "f32") return at::kFloat;
  if (text == "bfloat16" || text == "bf16") return at::kBFloat16;
  if (text == "float16" || text == "fp16" || text == "f16") return at::kHalf;
  if (text == "float64" || text == "fp64") return at::kDouble;
  fail("unknown dtype \"{}\" (expected float32, bfloat16, float16)", text);
}

bool aten_matmul_supported(const at::TensorOptions& options) {
  return !(options.device().is_cpu() && options.dtype() == at::kHalf);
}

std::string dtype_name(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: return "float32";
    case at::kBFloat16: return "bfloat16";
    case at::kHalf: return "float16";
    case at::kDouble: return "float64";
    default: return c10::toString(dtype);
  }
}

}  // namespace kvbench
