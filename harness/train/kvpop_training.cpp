#include "train/kvpop_training.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <limits>

#include "cache/kv_cache.h"
#include "common/error.h"
#include "train/lm_trainer.h"
#include "train/optimizer.h"

namespace kvbench {

namespace {

// A layer's boundary pairs over all KV heads, as index tensors.
struct LayerPairs {
  at::Tensor head, leaving, boundary, label;
};

LayerPairs layer_pairs(const at::Tensor& targets, const KvpopBudget& budget) {  // targets [KV, S]
  std::vector<int64_t> head, leaving, boundary;
  std::vector<float> label;
  for (int64_t h = 0; h < targets.size(0); ++h) {
    const BoundaryPairs p = boundary_pairs(targets[h], budget.sinks, budget.window, budget.k);
    head.insert(head.end(), p.leaving.size(), h);
    leaving.insert(leaving.end(), p.leaving.begin(), p.leaving.end());
    boundary.insert(boundary.end(), p.boundary.begin(), p.boundary.end());
    label.insert(label.end(), p.label.begin(), p.label.end());
  }
  return {at::tensor(head, at::kLong), at::tensor(leaving, at::kLong), at::tensor(boundary, at::kLong),
          at::tensor(label, at::kFloat)};
}

// Feature mean and spread per (layer, KV head, feature) over every training token: [L, KV, F] each.
std::pair<at::Tensor, at::Tensor> feature_statistics(const std::vector<KvpopSequence>& data) {
  std::vector<at::Tensor> means, stds;
  for (size_t l = 0; l < data.front().features.size(); ++l) {
    std::vector<at::Tensor> tokens;
    for (const auto& s : data) tokens.push_back(s.features[l][0]);  // [KV, S, F]
    const at::Tensor all = at::cat(tokens, 1);
    means.push_back(all.mean(1));
    stds.push_back(all.std(1));
  }
  return {at::stack(means), at::stack(stds)};
}

// Fraction of `oracle`'s members (bool [n]) among the top-k of `scores` [n].
double overlap(const at::Tensor& scores, const at::Tensor& oracle, int64_t k) {
  const at::Tensor picked = std::get<1>(scores.topk(k));
  return oracle.index_select(0, picked).sum().item<double>() / static_cast<double>(k);
}

}  // namespace

KvpopSequence analyse_sequence(const Model& model, const std::vector<int64_t>& ids, const FutureMassSpec& spec,
                               bool keep_attention) {
  at::NoGradGuard no_grad;
  const int64_t S = static_cast<int64_t>(ids.size());
  const at::Tensor tokens = at::tensor(ids, at::kLong).unsqueeze(0).to(model.options().device());
  const at::Tensor positions = at::arange(S, tokens.options()).unsqueeze(0);
  std::vector<QueryKeyValue> layers;
  model.forward_sequence(tokens, positions, &layers);
  KvpopSequence out;
  std::vector<at::Tensor> targets;
  for (const auto& qkv : layers) {
    out.features.push_back(KvpopScorer::features(model, qkv.k, qkv.v, positions).cpu());
    targets.push_back(future_mass_targets(qkv.q, qkv.k, spec)[0].to(at::kFloat).cpu());
  }
  out.targets = at::stack(targets);
  if (keep_attention) {  // the engine's own causal pass, whose attention the kvpop fallback accumulates
    KvCache cache(cache_shape(model.config()), 1, model.options(), false);
    ForwardOptions options;
    options.attention = AttentionCapture::AllLayers;
    const ForwardResult result = model.forward(tokens, positions, cache, options);
    const int64_t KV = model.config().num_kv_heads;
    for (const auto& probs : result.attention) out.attention.push_back(probs[0].view({KV, -1, S, S}).mean(1).cpu());
  }
  return out;
}

KvpopScorer train_kvpop_scorer(const std::vector<KvpopSequence>& data, const ScorerTrainingOptions& o) {
  if (data.empty()) fail("train-scorer: no training sequences");
  KvpopScorerShape shape = o.shape;
  shape.layers = static_cast<int64_t>(data.front().features.size());
  shape.kv_heads = data.front().features[0].size(1);
  shape.head_dim = data.front().features[0].size(3) / 2;
  const auto [mean, std] = feature_statistics(data);
  KvpopScorer scorer = KvpopScorer::create(shape, mean, std, o.seed);
  std::vector<std::vector<LayerPairs>> pairs;
  for (const auto& s : data) {
    pairs.emplace_back();
    for (int64_t l = 0; l < shape.layers; ++l) pairs.back().push_back(layer_pairs(s.targets[l], o.budget));
  }
  std::vector<at::Tensor> params = scorer.parameters();
  for (auto& p : params) p.requires_grad_(true);
  AdamW optimizer(params, std::vector<bool>(params.size(), false));
  const CosineSchedule schedule{o.lr, o.lr * 0.1, std::min<int64_t>(20, o.steps / 10), o.steps};
  ExampleOrder order(data.size(), o.seed);
  for (int64_t step = 0; step < o.steps; ++step) {
    std::vector<at::Tensor> losses;
    for (int64_t i = 0; i < o.sequences_per_step; ++i) {
      const size_t s = order.next();
      for (int64_t l = 0; l < shape.layers; ++l) {
        const LayerPairs& p = pairs[s][l];
        if (p.head.numel() == 0) continue;
        const at::Tensor f = scorer.score(l, data[s].features[l])[0];  // [KV, S]
        losses.push_back(pairwise_logistic_loss(f.index({p.head, p.leaving}), f.index({p.head, p.boundary}), p.label,
                                                o.temperature));
      }
    }
    if (losses.empty()) fail("train-scorer: no boundary pairs (texts shorter than sinks + window + k?)");
    const at::Tensor loss = at::stack(losses).mean();
    loss.backward();
    clip_grad_norm(params, 1.0);
    optimizer.step(schedule.at(step));
    optimizer.zero_grad();
    if (o.log_every > 0 && (step % o.log_every == 0 || step + 1 == o.steps))
      spdlog::info("scorer step {}/{}: pairwise loss {:.4f}", step + 1, o.steps, loss.item<double>());
  }
  for (auto& p : params) p.requires_grad_(false);
  return scorer;
}

RecallReport oracle_recall(const std::vector<KvpopSequence>& data, const KvpopScorer* scorer, const KvpopBudget& b,
                           int64_t stride) {
  at::NoGradGuard no_grad;
  double learned = 0.0, fallback = 0.0, recency = 0.0;
  int64_t decisions = 0;
  for (const auto& s : data) {
    if (s.attention.empty()) fail("oracle_recall: sequences analysed without attention");
    const int64_t L = s.targets.size(0), KV = s.targets.size(1), S = s.targets.size(2);
    for (int64_t l = 0; l < L; ++l) {
      const at::Tensor learned_scores = scorer ? scorer->score(l, s.features[l])[0] : at::Tensor();
      const at::Tensor accumulated = s.attention[l].cumsum(1);  // [KV, q, t]: mass from queries 0..q
      for (int64_t h = 0; h < KV; ++h) {
        // Step p: tokens 0..p−1 seen, candidates [s, p − w) (the last one just left the window).
        for (int64_t p = b.sinks + b.window + b.k + 1; p <= S; p += stride) {
          const int64_t n = p - b.window - b.sinks;
          const at::Tensor oracle = at::zeros({n}, at::kFloat);
          oracle.index_fill_(0, std::get<1>(s.targets[l][h].narrow(0, b.sinks, n).topk(b.k)), 1.0);
          fallback += overlap(accumulated[h][p - 1].narrow(0, b.sinks, n), oracle, b.k);
          recency += oracle.narrow(0, n - b.k, b.k).sum().item<double>() / static_cast<double>(b.k);
          if (scorer) learned += overlap(learned_scores[h].narrow(0, b.sinks, n), oracle, b.k);
          ++decisions;
        }
      }
    }
  }
  if (decisions == 0) fail("oracle_recall: no decision has more than k candidates (texts too short?)");
  const double count = static_cast<double>(decisions);
  return {scorer ? learned / count : std::numeric_limits<double>::quiet_NaN(), fallback / count, recency / count,
          decisions};
}

}  // namespace kvbench
