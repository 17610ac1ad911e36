// KVpop's learned retention scorers (arXiv 2607.05061): one small model per (layer, KV head) that
// scores a cache entry from its key and value alone, trained on future-attention-mass targets
// (policies/kvpop_targets.h). Features: [k; v] with the key rotated back to position 0 (the cache holds
// post-RoPE keys; un-rotating removes the position from the key's direction), standardised with the
// training set's mean and spread. `kvbench train-scorer` writes them; the kvpop policy loads them.
#pragma once
#include <ATen/ATen.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "model/model.h"
#include "policies/retention_scorer.h"
#include "policies/kvpop_mlstm.h"

namespace kvbench {

enum class ScorerKind { Linear, Mlp, Mlstm };  // Mlstm: the stateful scorer (policies/kvpop_mlstm.h)

struct KvpopScorerShape {
  ScorerKind kind = ScorerKind::Linear;
  int64_t layers = 0, kv_heads = 0, head_dim = 0;
  int64_t hidden = 32;  // MLP width; mLSTM memory width M
  int64_t delay = 0;    // mLSTM: a token is scored when the token `delay` places later arrives (0 = at insertion)
};

class KvpopScorer final : public RetentionScorer {
 public:
  // Fresh parameters (small random, seeded); features standardised with `feature_mean`/`feature_std` [L, KV, 2D].
  static KvpopScorer create(const KvpopScorerShape& shape, const at::Tensor& feature_mean, const at::Tensor& feature_std,
                            uint64_t seed);
  // Reads a file written by save(); kvbench::Error naming the file and tensor when it is malformed.
  static KvpopScorer load(const std::filesystem::path& file);
  // safetensors with the parameters; `metadata` (the targets' s, w, k, γ, ...) is stored alongside.
  void save(const std::filesystem::path& file, std::map<std::string, std::string> metadata = {}) const;

  const KvpopScorerShape& shape() const { return shape_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::vector<at::Tensor> parameters() const;

  // Features [B, KV, N, 2D] of one layer's cache entries: post-RoPE keys k and values v [B, KV, N, D]
  // at original positions [B, N] (every head) or [B, KV, N] (per head).
  static at::Tensor features(const Model& model, const at::Tensor& k, const at::Tensor& v, const at::Tensor& positions);
  // Scores [B, KV, N] of layer `layer` from features (higher = keep). For mLSTM the features must be a
  // whole sequence in arrival order (training, evaluation); the kvpop policy streams instead (stream()).
  at::Tensor score(int64_t layer, const at::Tensor& features) const;
  std::unique_ptr<ScorerStream> stream() const override;
  // The kvpop policy's hook (policies/retention_scorer.h).
  at::Tensor score(const Model& model, int64_t layer, const at::Tensor& keys, const at::Tensor& values,
                   const at::Tensor& positions) const override {
    return score(layer, features(model, keys, values, positions));
  }

 private:
  friend class MlstmStream;
  at::Tensor standardised(int64_t layer, const at::Tensor& features) const;
  mlstm::Weights mlstm_weights(int64_t layer) const;

  KvpopScorerShape shape_;
  std::map<std::string, at::Tensor> tensors_;  // feature_mean, feature_std, and the kind's parameters
  std::map<std::string, std::string> metadata_;
};

std::string to_string(ScorerKind kind);
ScorerKind parse_scorer_kind(const std::string& text);

}  // namespace kvbench
