// The decoder (Llama / Qwen2 / Qwen3), readable top to bottom: embed → per layer (RMSNorm → q/k/v
// [+ Qwen3 q/k-norm] → RoPE at explicit positions → GQA attention over cached K/V → o_proj → residual
// → RMSNorm → SwiGLU → residual) → final norm → LM head (fp32 logits).
//
// The pieces are public because counter-causal scoring re-runs them with fresh queries and an
// counter-causal mask over cached keys/values (policies/), and training reuses them with autograd on.
#pragma once
#include <ATen/ATen.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cache/kv_cache.h"
#include "model/config.h"
#include "model/linear.h"

namespace kvbench {

struct LayerWeights {
  at::Tensor input_norm, post_attention_norm;
  at::Tensor q_proj, k_proj, v_proj, o_proj;      // [out, in]
  at::Tensor q_bias, k_bias, v_bias, o_bias;      // undefined when the family has none
  at::Tensor q_norm, k_norm;                      // Qwen3: [head_dim]
  at::Tensor k_smear;                             // layer 0 of key_smear models: [KV] gate logits
  at::Tensor gate_proj, up_proj, down_proj;
  at::Tensor gate_bias, up_bias, down_bias;
};

struct ModelWeights {
  at::Tensor embed_tokens;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  at::Tensor final_norm;
  at::Tensor lm_head;       // [vocab, hidden]; the embedding itself when tied
};

enum class AttentionCapture { None, LastLayer, AllLayers };

struct ForwardOptions {
  bool all_logits = false;  // logits for every new token (else only the last one's)
  AttentionCapture attention = AttentionCapture::None;  // return the new tokens' attention probabilities
  bool queries = false;  // return every layer's queries of the new tokens, before RoPE
  bool attention_inputs = false;  // return every layer's attention input of the new tokens (after its input norm)
};

struct ForwardResult {
  at::Tensor logits;                  // [B, T, V] (or [B, 1, V]) float32 (float64 models: float64)
  // Per captured layer [B, H, T, N] float32, N = cache size after the append (AllLayers: index = layer;
  // LastLayer: one entry).
  std::vector<at::Tensor> attention;
  std::vector<at::Tensor> queries;  // with ForwardOptions::queries: per layer [B, H, T, D], before RoPE
  std::vector<at::Tensor> attention_inputs;  // with ForwardOptions::attention_inputs: per layer [B, T, hidden]
};

struct QueryKeyValue {
  at::Tensor q;  // [B, H, T, D] post-RoPE
  at::Tensor k;  // [B, KV, T, D] post-RoPE
  at::Tensor v;  // [B, KV, T, D]
};

struct Rotary {
  at::Tensor cos, sin;
};

// One sequence group's share of a forward pass: new tokens ids [B, T] at original positions [B, T],
// appended to `cache`. Several groups (samples with caches of different lengths) can share one pass.
struct StepInput {
  at::Tensor ids, positions;
  KvCache* cache = nullptr;
  ForwardOptions options;
};

class Model {
 public:
  // Loads a HF directory (config.json + safetensors) or a GGUF model (a .gguf file, or a directory holding
  // one and no config.json; quantized weights dequantized); weights are converted to `dtype` on `device`.
  static Model load(const std::filesystem::path& model, at::Device device = at::kCPU,
                    at::ScalarType dtype = at::kFloat);
  // A model from weights already in memory (random-weight benchmarks, training).
  static Model from_weights(ModelConfig config, ModelWeights weights);

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  at::TensorOptions options() const { return weights_.embed_tokens.options(); }

  // Causal forward of new tokens ids [B, T] at original positions [B, T] against `cache`, to which
  // their keys/values (and H^(L-1) if the cache keeps it) are appended.
  ForwardResult forward(const at::Tensor& ids, const at::Tensor& positions, KvCache& cache,
                        const ForwardOptions& options = {}) const;
  // The same for several groups at once (batched samples) in one pass: their rows packed as one matrix,
  // the linear layers run over row segments (model/linear.h: each group's rows as they come out alone, so
  // each weight is read once for every group small enough for our kernel); RoPE, the cache append and
  // attention run per group over its own cache. On the CPU a group's result is bitwise its own forward's.
  std::vector<ForwardResult> forward(const std::vector<StepInput>& groups) const;

  // Training mode: the whole sequence ids [B, T] at positions [B, T], causal, no cache; logits of
  // every token [B, T, V]. Records autograd when the weights require grad. `layers` (if given)
  // receives each layer's post-RoPE q/k and v (KVpop targets and scorer inputs).
  at::Tensor forward_sequence(const at::Tensor& ids, const at::Tensor& positions,
                              std::vector<QueryKeyValue>* layers = nullptr) const;

  // --- pieces ---
  at::Tensor embed(const at::Tensor& ids) const;
  at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight) const;
  // project_heads, the key smear (layer 0; previous_ids [B, T] as in smear_keys) and RoPE at positions [B, T].
  QueryKeyValue project(int64_t layer, const at::Tensor& normed, const at::Tensor& positions,
                        const at::Tensor& previous_ids) const;
  // The projections of normed [..., hidden] to [..., heads, D] (Qwen3's q/k-norm applied), before RoPE.
  // With `segments`, normed is [M, hidden], several samples' rows packed (model/linear.h: RowSegments), each
  // segment's result bitwise its own; so for every piece below that takes them.
  QueryKeyValue project_heads(int64_t layer, const at::Tensor& normed, const RowSegments& segments = {}) const;
  // The query heads alone [..., H, D] (q-norm applied), before RoPE: project_heads' q. Public because the
  // counter-causal pass of several samples projects all their rows at once, then rotates each sample's own.
  // Without `q_norm` Qwen3's query norm is left out, as the paper's counter-causal hooks project queries.
  at::Tensor query_heads(int64_t layer, const at::Tensor& normed, const RowSegments& segments = {},
                         bool q_norm = true) const;
  // query_heads rotated: normed [B, T, hidden] → [B, H, T, D] at positions [B, T].
  at::Tensor query(int64_t layer, const at::Tensor& normed, const at::Tensor& positions) const;
  // Key smear (config key_smear, kvbench's demo model): layer 0's pre-RoPE key of a token at t becomes
  // (1 − a)·k_t + a·k_{t−1}, a = sigmoid(k_smear) per KV head. k is [..., KV, D] (from project_heads),
  // previous_ids [...] the ids at t − 1 (−1 where there is none: the key stays as it is).
  at::Tensor smear_keys(const at::Tensor& k, const at::Tensor& previous_ids, const RowSegments& segments = {}) const;
  // Attention of q [B, H, T, D] over k/v [B, KV, N, D] (GQA by head groups, K/V never repeated).
  // `allowed` is a bool mask broadcastable to [B, T, N], or [B, KV, T, N] (per KV head: a ragged cache's
  // padding); rows with no allowed key yield 0.
  at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed,
                    at::Tensor* probs_out = nullptr) const;
  at::Tensor attention_residual(int64_t layer, const at::Tensor& x, const at::Tensor& attended,
                                const RowSegments& segments = {}) const;
  at::Tensor mlp_residual(int64_t layer, const at::Tensor& x, const RowSegments& segments = {}) const;
  // Rotates x [B, heads, T, D] to positions [B, T]; rope(x, −positions) undoes rope(x, positions).
  at::Tensor rope(const at::Tensor& x, const at::Tensor& positions) const;
  // rope() in two steps: the cos/sin tables of positions [B, T] ([B, T, D], float32), and the rotation
  // of any x [..., D] by tables broadcastable to it.
  Rotary rotary(const at::Tensor& positions) const;
  at::Tensor rotate(const at::Tensor& x, const Rotary& tables) const;
  // Final norm + LM head, float32 (float64 models: float64).
  at::Tensor logits(const at::Tensor& x, const RowSegments& segments = {}) const;

 private:
  // projected [..., heads · D] → [..., heads, D], with Qwen3's q/k-norm `norm` (undefined for v).
  at::Tensor split_heads(const at::Tensor& projected, int64_t heads, const at::Tensor& norm) const;

  ModelConfig config_;
  ModelWeights weights_;
  at::Tensor inv_freq_;  // [head_dim / 2] float32 on the model's device
};

// Parses "cpu", "cuda", "cuda:1" and "float32|fp32", "bfloat16|bf16", "float16|fp16". A CUDA device
// this build or machine cannot give is refused here, with the reason, before any work.
at::Device parse_device(const std::string& text);
int cuda_device_count();  // 0 where the CUDA path is not compiled in (KVBENCH_CUDA) or no GPU is visible
at::ScalarType parse_dtype(const std::string& text);
std::string dtype_name(at::ScalarType dtype);

// Whether ATen multiplies matrices of these options: libtorch 1.13 has no CPU float16 product, so such
// work runs in float32 (rounded back to float16 after).
bool aten_matmul_supported(const at::TensorOptions& options);

}  // namespace kvbench
