#include "model/model.h"

#include <cmath>

#include "common/error.h"
#include "model/linear.h"
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

// RoPE inverse frequencies, with Llama 3.1's piecewise rescaling of long wavelengths when configured.
at::Tensor inverse_frequencies(const ModelConfig& c) {
  const int64_t half = c.head_dim / 2;
  std::vector<float> inv(half);
  for (int64_t i = 0; i < half; ++i) {
    double f = 1.0 / std::pow(c.rope_theta, static_cast<double>(2 * i) / static_cast<double>(c.head_dim));
    if (c.rope_scaling) {
      const auto& s = *c.rope_scaling;
      const double old_len = static_cast<double>(s.original_max_position_embeddings);
      const double low_wavelen = old_len / s.low_freq_factor, high_wavelen = old_len / s.high_freq_factor;
      const double wavelen = 2.0 * M_PI / f;
      if (wavelen > low_wavelen) {
        f = f / s.factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }
    }
    inv[i] = static_cast<float>(f);
  }
  return at::tensor(inv, at::kFloat);
}

}  // namespace

Model Model::load(const std::filesystem::path& dir, at::Device device, at::ScalarType dtype) {
  ModelConfig config = load_model_config(dir);
  ModelWeights weights = load_weights(dir, config, device, dtype);
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
  // As HF: normalise in float32, cast back, then scale (the order matters in bf16).
  const at::Tensor xf = x.to(compute_dtype(x));
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + config_.rms_norm_eps);
  return weight * normed.to(x.scalar_type());
}

at::Tensor Model::rope(const at::Tensor& x, const at::Tensor& positions) const {
  // x [B, heads, T, D]; positions [B, T]. HF's rotate_half convention (halves, not interleaved pairs).
  const at::Tensor angles = positions.to(at::kFloat).unsqueeze(-1) * inv_freq_;  // [B, T, D/2]
  const at::Tensor cos = at::cat({angles.cos(), angles.cos()}, -1).unsqueeze(1);
  const at::Tensor sin = at::cat({angles.sin(), angles.sin()}, -1).unsqueeze(1);
  const at::Tensor xf = x.to(compute_dtype(x));
  const int64_t half = x.size(-1) / 2;
  const at::Tensor rotated = at::cat({-xf.narrow(-1, half, half), xf.narrow(-1, 0, half)}, -1);
  return (xf * cos + rotated * sin).to(x.scalar_type());
}

at::Tensor Model::query(int64_t layer, const at::Tensor& normed, const at::Tensor& positions) const {
  const LayerWeights& w = weights_.layers[layer];
  const int64_t B = normed.size(0), T = normed.size(1);
  at::Tensor q = linear(normed, w.q_proj, w.q_bias).view({B, T, config_.num_heads, config_.head_dim});
  if (config_.qk_norm) q = rms_norm(q, w.q_norm);
  return rope(q.transpose(1, 2), positions);
}

QueryKeyValue Model::project(int64_t layer, const at::Tensor& normed, const at::Tensor& positions) const {
  const LayerWeights& w = weights_.layers[layer];
  const int64_t B = normed.size(0), T = normed.size(1);
  at::Tensor k = linear(normed, w.k_proj, w.k_bias).view({B, T, config_.num_kv_heads, config_.head_dim});
  if (config_.qk_norm) k = rms_norm(k, w.k_norm);
  at::Tensor v = linear(normed, w.v_proj, w.v_bias).view({B, T, config_.num_kv_heads, config_.head_dim});
  return {query(layer, normed, positions), rope(k.transpose(1, 2), positions), v.transpose(1, 2)};
}

at::Tensor Model::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed,
                         at::Tensor* probs_out) const {
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3);
  const int64_t KV = k.size(1), G = H / KV, N = k.size(2);
  // Query heads of one KV group are stacked along the row axis, so one matmul per KV head serves them all.
  const at::Tensor grouped = q.reshape({B, KV, G * T, D});
  at::Tensor scores = at::matmul(grouped, k.transpose(-1, -2)).to(compute_dtype(q)) / std::sqrt(static_cast<double>(D));
  scores = scores.view({B, KV, G, T, N});
  at::Tensor probs;
  if (allowed.defined()) {
    const at::Tensor mask = allowed.reshape({allowed.dim() == 3 ? allowed.size(0) : 1, 1, 1, T, N});
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

at::Tensor Model::attention_residual(int64_t layer, const at::Tensor& x, const at::Tensor& attended) const {
  const LayerWeights& w = weights_.layers[layer];
  return x + linear(attended, w.o_proj, w.o_bias);
}

at::Tensor Model::mlp_residual(int64_t layer, const at::Tensor& x) const {
  const LayerWeights& w = weights_.layers[layer];
  const at::Tensor h = rms_norm(x, w.post_attention_norm);
  const at::Tensor gated = at::silu(linear(h, w.gate_proj, w.gate_bias)) * linear(h, w.up_proj, w.up_bias);
  return x + linear(gated, w.down_proj, w.down_bias);
}

at::Tensor Model::logits(const at::Tensor& x) const {
  const at::Tensor out = kvbench::linear(rms_norm(x, weights_.final_norm), weights_.lm_head);
  return out.to(compute_dtype(out));
}

ForwardResult Model::forward(const at::Tensor& ids, const at::Tensor& positions, KvCache& cache,
                             const ForwardOptions& options) const {
  const int64_t T = ids.size(1), cached = cache.size();
  const at::Tensor allowed = T > 1 ? causal_mask(T, cached, ids.device()) : at::Tensor();
  ForwardResult result;
  at::Tensor x = embed(ids), last_layer_input;
  cache.begin_append(T);
  for (int64_t l = 0; l < config_.num_layers; ++l) {
    if (l == config_.num_layers - 1) last_layer_input = x;
    const QueryKeyValue qkv = project(l, rms_norm(x, weights_.layers[l].input_norm), positions);
    const auto [k, v] = cache.append_layer(l, qkv.k, qkv.v);
    const bool capture = options.attention == AttentionCapture::AllLayers ||
                         (options.attention == AttentionCapture::LastLayer && l == config_.num_layers - 1);
    at::Tensor probs;
    x = attention_residual(l, x, attend(qkv.q, k, v, allowed, capture ? &probs : nullptr));
    x = mlp_residual(l, x);
    if (capture) result.attention.push_back(probs);
  }
  cache.end_append(ids, positions, last_layer_input);
  result.logits = logits(options.all_logits ? x : x.narrow(1, T - 1, 1));
  return result;
}

at::Tensor Model::forward_sequence(const at::Tensor& ids, const at::Tensor& positions,
                                   std::vector<QueryKeyValue>* layers) const {
  const at::Tensor allowed = causal_mask(ids.size(1), 0, ids.device());
  at::Tensor x = embed(ids);
  for (int64_t l = 0; l < config_.num_layers; ++l) {
    const QueryKeyValue qkv = project(l, rms_norm(x, weights_.layers[l].input_norm), positions);
    x = mlp_residual(l, attention_residual(l, x, attend(qkv.q, qkv.k, qkv.v, allowed)));
    if (layers) layers->push_back(qkv);
  }
  return logits(x);
}

at::Device parse_device(const std::string& text) {
  try {
    return at::Device(text);
  } catch (const std::exception&) {
    fail("unknown device \"{}\" (expected cpu, cuda or cuda:N)", text);
  }
}

at::ScalarType parse_dtype(const std::string& text) {
  if (text == "float32" || text == "fp32" || text == "f32") return at::kFloat;
  if (text == "bfloat16" || text == "bf16") return at::kBFloat16;
  if (text == "float16" || text == "fp16" || text == "f16") return at::kHalf;
  if (text == "float64" || text == "fp64") return at::kDouble;
  fail("unknown dtype \"{}\" (expected float32, bfloat16, float16)", text);
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
