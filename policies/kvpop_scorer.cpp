#include "policies/kvpop_scorer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/ranges.h>

#include <deque>
#include <optional>

#include "common/error.h"
#include "model/checkpoint_writer.h"
#include "model/safetensors.h"

namespace kvbench {

namespace {

struct ParameterShape {
  std::vector<int64_t> dims;
  bool bias;  // starts at 0; weights start random with variance 1/fan-in
};

// The parameter tensors of each kind.
std::map<std::string, ParameterShape> parameter_shapes(const KvpopScorerShape& s) {
  const int64_t L = s.layers, KV = s.kv_heads, F = 2 * s.head_dim, Hm = s.hidden;
  if (s.kind == ScorerKind::Linear) return {{"linear.weight", {{L, KV, F}, false}}, {"linear.bias", {{L, KV}, true}}};
  if (s.kind == ScorerKind::Mlstm)
    return {{"mlstm.wq", {{L, KV, Hm, F}, false}}, {"mlstm.wk", {{L, KV, Hm, F}, false}},
            {"mlstm.wv", {{L, KV, Hm, F}, false}}, {"mlstm.wi", {{L, KV, F}, false}},
            {"mlstm.bi", {{L, KV}, true}},         {"mlstm.wf", {{L, KV, F}, false}},
            {"mlstm.bf", {{L, KV}, true}},         {"mlstm.a", {{L, KV, Hm}, false}},
            {"mlstm.b", {{L, KV}, true}}};
  return {{"mlp.w1", {{L, KV, Hm, F}, false}},
          {"mlp.b1", {{L, KV, Hm}, true}},
          {"mlp.w2", {{L, KV, Hm}, false}},
          {"mlp.b2", {{L, KV}, true}}};
}

// [KV, F] → broadcastable over [B, KV, N, F].
at::Tensor per_head(const at::Tensor& t) { return t.unsqueeze(0).unsqueeze(2); }

}  // namespace

std::string to_string(ScorerKind kind) {
  return kind == ScorerKind::Linear ? "linear" : kind == ScorerKind::Mlp ? "mlp" : "mlstm";
}

ScorerKind parse_scorer_kind(const std::string& text) {
  if (text == "linear") return ScorerKind::Linear;
  if (text == "mlp") return ScorerKind::Mlp;
  if (text == "mlstm") return ScorerKind::Mlstm;
  fail("unknown KVpop scorer kind \"{}\" (expected linear, mlp or mlstm)", text);
}

// Scores of entries the stream has not scored yet: above any learned score, so they stay.
constexpr float kUnscored = 1e30f;

// The kvpop policy's view of an mLSTM scorer: the recurrent form, token by token (policies/kvpop_mlstm.h).
class MlstmStream final : public ScorerStream {
 public:
  explicit MlstmStream(const KvpopScorer& scorer) : scorer_(scorer), layers_(scorer.shape().layers) {}

  void append(const Model& model, int64_t layer, const at::Tensor& keys, const at::Tensor& values,
              const at::Tensor& positions) override {
    Layer& l = layers_[layer];
    if (!l.state) {
      l.weights = scorer_.mlstm_weights(layer);
      l.state.emplace(keys.size(0), keys.size(1), scorer_.shape().hidden, keys.options().dtype(at::kFloat));
    }
    const at::Tensor x = scorer_.standardised(layer, KvpopScorer::features(model, keys, values, positions));
    const mlstm::Projection p = mlstm::project(l.weights, x);
    for (int64_t t = 0; t < x.size(2); ++t) {
      l.state->absorb(p, t);
      // A copy: `positions` may view the cache's storage, which compaction rewrites in place.
      l.pending.push_back({p.q.select(2, t), positions.select(2, t).clone()});
      if (static_cast<int64_t>(l.pending.size()) <= scorer_.shape().delay) continue;
      const Pending& u = l.pending.front();  // leaves the window now: read from the memory up to t
      store(l, u.positions, mlstm::readout(l.weights, l.state->read(u.q).unsqueeze(2)).squeeze(2));
      l.pending.pop_front();
    }
  }

  at::Tensor scores(int64_t layer, const at::Tensor& positions) const override {
    const Layer& l = layers_[layer];
    if (!l.scores.defined() || positions.numel() == 0)
      return at::full(positions.sizes(), kUnscored, positions.options().dtype(at::kFloat));
    const int64_t missing = positions.max().item<int64_t>() + 1 - l.scores.size(-1);
    const at::Tensor known = missing > 0 ? at::constant_pad_nd(l.scores, {0, missing}, kUnscored) : l.scores;
    return known.gather(-1, positions);
  }

  void expand_batch(int64_t batch) override {
    for (Layer& l : layers_) {
      if (l.state) l.state->expand_batch(batch);
      if (l.scores.defined()) l.scores = l.scores.expand({batch, -1, -1}).contiguous();
      for (Pending& u : l.pending) {
        u.q = u.q.expand({batch, -1, -1}).contiguous();
        u.positions = u.positions.expand({batch, -1}).contiguous();
      }
    }
  }

 private:
  struct Pending {
    at::Tensor q, positions;  // [B, KV, M], [B, KV]
  };
  struct Layer {
    mlstm::Weights weights;
    std::optional<mlstm::State> state;
    std::deque<Pending> pending;  // absorbed, waiting for their readout
    at::Tensor scores;            // [B, KV, capacity] by original position
  };

  // Scores r [B, KV] of the tokens at positions [B, KV].
  static void store(Layer& l, const at::Tensor& positions, const at::Tensor& r) {
    const int64_t needed = positions.max().item<int64_t>() + 1;
    if (!l.scores.defined() || l.scores.size(-1) < needed) {
      at::Tensor grown = at::full({r.size(0), r.size(1), std::max<int64_t>(2 * needed, 64)}, kUnscored, r.options());
      if (l.scores.defined()) grown.narrow(-1, 0, l.scores.size(-1)).copy_(l.scores);
      l.scores = grown;
    }
    l.scores.scatter_(-1, positions.unsqueeze(-1), r.unsqueeze(-1));
  }

  const KvpopScorer& scorer_;
  std::vector<Layer> layers_;
};

KvpopScorer KvpopScorer::create(const KvpopScorerShape& shape, const at::Tensor& feature_mean,
                                const at::Tensor& feature_std, uint64_t seed) {
  KvpopScorer scorer;
  scorer.shape_ = shape;
  scorer.tensors_["feature_mean"] = feature_mean.to(at::kFloat).contiguous();
  scorer.tensors_["feature_std"] = feature_std.to(at::kFloat).clamp_min(1e-6).contiguous();
  at::Generator generator = at::detail::createCPUGenerator(seed);
  for (const auto& [name, p] : parameter_shapes(shape)) {
    const double fan_in = static_cast<double>(p.dims.back());
    scorer.tensors_[name] = p.bias ? at::zeros(p.dims, at::kFloat)
                                   : at::normal(0.0, 1.0 / std::sqrt(fan_in), p.dims, generator, at::TensorOptions());
  }
  // The forget gate starts mostly open (σ(3) ≈ 0.95: a memory of about 20 tokens), as LSTM forget biases do.
  if (shape.kind == ScorerKind::Mlstm) scorer.tensors_["mlstm.bf"].fill_(3.0);
  return scorer;
}

KvpopScorer KvpopScorer::load(const std::filesystem::path& file) {
  const SafetensorsFile st(file);
  KvpopScorer scorer;
  scorer.metadata_ = st.metadata();
  const auto kind = scorer.metadata_.find("kind");
  if (kind == scorer.metadata_.end()) fail("{}: no \"kind\" in the metadata (not a KVpop scorer file?)", file.string());
  scorer.shape_.kind = parse_scorer_kind(kind->second);
  const auto& mean = st.tensors().count("feature_mean") ? st.tensors().at("feature_mean").shape : std::vector<int64_t>{};
  if (mean.size() != 3 || mean[2] % 2 != 0) fail("{}: tensor \"feature_mean\" missing or not [L, KV, 2D]", file.string());
  scorer.shape_.layers = mean[0];
  scorer.shape_.kv_heads = mean[1];
  scorer.shape_.head_dim = mean[2] / 2;
  if (scorer.shape_.kind != ScorerKind::Linear) {
    const std::string width = scorer.shape_.kind == ScorerKind::Mlp ? "mlp.b1" : "mlstm.a";
    const auto& b1 = st.tensors().count(width) ? st.tensors().at(width).shape : std::vector<int64_t>{};
    if (b1.size() != 3) fail("{}: tensor \"{}\" missing or not [L, KV, hidden]", file.string(), width);
    scorer.shape_.hidden = b1[2];
  }
  if (scorer.shape_.kind == ScorerKind::Mlstm) {
    const auto delay = scorer.metadata_.find("delay");
    try {
      scorer.shape_.delay = std::stoll(delay == scorer.metadata_.end() ? "" : delay->second);
    } catch (const std::exception&) {
      fail("{}: an mlstm scorer needs an integer \"delay\" in the metadata", file.string());
    }
  }
  std::map<std::string, std::vector<int64_t>> expected = {{"feature_mean", mean}, {"feature_std", mean}};
  for (const auto& [name, p] : parameter_shapes(scorer.shape_)) expected[name] = p.dims;
  for (const auto& [name, dims] : expected) {
    const auto it = st.tensors().find(name);
    if (it == st.tensors().end()) fail("{}: missing tensor \"{}\"", file.string(), name);
    if (it->second.shape != dims)
      fail("{}: tensor \"{}\" has shape [{}], expected [{}]", file.string(), name, fmt::join(it->second.shape, ", "),
           fmt::join(dims, ", "));
    scorer.tensors_[name] = st.view(name).to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  }
  return scorer;
}

void KvpopScorer::save(const std::filesystem::path& file, std::map<std::string, std::string> metadata) const {
  metadata["kind"] = to_string(shape_.kind);
  if (shape_.kind == ScorerKind::Mlstm) metadata["delay"] = std::to_string(shape_.delay);
  metadata["format"] = "kvbench-kvpop-scorer";
  std::vector<NamedTensor> named(tensors_.begin(), tensors_.end());
  write_safetensors(file, named, at::kFloat, metadata);
}

std::vector<at::Tensor> KvpopScorer::parameters() const {
  std::vector<at::Tensor> out;
  for (const auto& [name, p] : parameter_shapes(shape_)) out.push_back(tensors_.at(name));
  return out;
}

at::Tensor KvpopScorer::features(const Model& model, const at::Tensor& k, const at::Tensor& v,
                                 const at::Tensor& positions) {
  const int64_t B = k.size(0), KV = k.size(1), N = k.size(2), D = k.size(3);
  const at::Tensor per_head = positions.dim() == 2 ? positions.unsqueeze(1).expand({B, KV, N}) : positions;
  // RoPE by −position undoes it; heads are folded into the batch so each has its own positions.
  const at::Tensor unrotated =
      model.rope(k.reshape({B * KV, 1, N, D}), -per_head.reshape({B * KV, N})).view({B, KV, N, D});
  return at::cat({unrotated, v}, -1).to(at::kFloat);
}

at::Tensor KvpopScorer::standardised(int64_t layer, const at::Tensor& features) const {
  return (features - per_head(tensors_.at("feature_mean")[layer])) / per_head(tensors_.at("feature_std")[layer]);
}

mlstm::Weights KvpopScorer::mlstm_weights(int64_t layer) const {
  auto at_layer = [&](const char* name) { return tensors_.at(std::string("mlstm.") + name)[layer]; };
  return {at_layer("wq"), at_layer("wk"), at_layer("wv"), at_layer("wi"), at_layer("bi"),
          at_layer("wf"), at_layer("bf"), at_layer("a"),  at_layer("b")};
}

std::unique_ptr<ScorerStream> KvpopScorer::stream() const {
  return shape_.kind == ScorerKind::Mlstm ? std::make_unique<MlstmStream>(*this) : nullptr;
}

at::Tensor KvpopScorer::score(int64_t layer, const at::Tensor& features) const {
  const at::Tensor x = standardised(layer, features);
  if (shape_.kind == ScorerKind::Mlstm) return mlstm::delayed_scores(mlstm_weights(layer), x, shape_.delay);
  if (shape_.kind == ScorerKind::Linear)
    return (x * per_head(tensors_.at("linear.weight")[layer])).sum(-1) + tensors_.at("linear.bias")[layer].view({1, -1, 1});
  const at::Tensor hidden = at::gelu(at::einsum("bknf,khf->bknh", {x, tensors_.at("mlp.w1")[layer]}) +
                                     per_head(tensors_.at("mlp.b1")[layer]));
  return (hidden * per_head(tensors_.at("mlp.w2")[layer])).sum(-1) + tensors_.at("mlp.b2")[layer].view({1, -1, 1});
}

}  // namespace kvbench
