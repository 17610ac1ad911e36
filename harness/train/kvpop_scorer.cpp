#include "train/kvpop_scorer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/ranges.h>

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
  return {{"mlp.w1", {{L, KV, Hm, F}, false}},
          {"mlp.b1", {{L, KV, Hm}, true}},
          {"mlp.w2", {{L, KV, Hm}, false}},
          {"mlp.b2", {{L, KV}, true}}};
}

// [KV, F] → broadcastable over [B, KV, N, F].
at::Tensor per_head(const at::Tensor& t) { return t.unsqueeze(0).unsqueeze(2); }

}  // namespace

std::string to_string(ScorerKind kind) { return kind == ScorerKind::Linear ? "linear" : "mlp"; }

ScorerKind parse_scorer_kind(const std::string& text) {
  if (text == "linear") return ScorerKind::Linear;
  if (text == "mlp") return ScorerKind::Mlp;
  fail("unknown KVpop scorer kind \"{}\" (expected linear or mlp)", text);
}

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
  if (scorer.shape_.kind == ScorerKind::Mlp) {
    const auto& b1 = st.tensors().count("mlp.b1") ? st.tensors().at("mlp.b1").shape : std::vector<int64_t>{};
    if (b1.size() != 3) fail("{}: tensor \"mlp.b1\" missing or not [L, KV, hidden]", file.string());
    scorer.shape_.hidden = b1[2];
  }
  std::map<std::string, std::vector<int64_t>> expected = {{"feature_mean", mean}, {"feature_std", mean}};
  for (const auto& [name, p] : parameter_shapes(scorer.shape_)) expected[name] = p.dims;
  for (const auto& [name, dims] : expected) {
    const auto it = st.tensors().find(name);
    if (it == st.tensors().end()) fail("{}: missing tensor \"{}\"", file.string(), name);
    if (it->second.shape != dims)
      fail("{}: tensor \"{}\" has shape [{}], expected [{}]", file.string(), name, fmt::join(it->second.shape, ", "),
           fmt::join(dims, ", "));
    scorer.tensors_[name] = st.load(name, at::kCPU, at::kFloat);
  }
  return scorer;
}

void KvpopScorer::save(const std::filesystem::path& file, std::map<std::string, std::string> metadata) const {
  metadata["kind"] = to_string(shape_.kind);
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

at::Tensor KvpopScorer::score(int64_t layer, const at::Tensor& features) const {
  const at::Tensor x = (features - per_head(tensors_.at("feature_mean")[layer])) / per_head(tensors_.at("feature_std")[layer]);
  if (shape_.kind == ScorerKind::Linear)
    return (x * per_head(tensors_.at("linear.weight")[layer])).sum(-1) + tensors_.at("linear.bias")[layer].view({1, -1, 1});
  const at::Tensor hidden = at::gelu(at::einsum("bknf,khf->bknh", {x, tensors_.at("mlp.w1")[layer]}) +
                                     per_head(tensors_.at("mlp.b1")[layer]));
  return (hidden * per_head(tensors_.at("mlp.w2")[layer])).sum(-1) + tensors_.at("mlp.b2")[layer].view({1, -1, 1});
}

}  // namespace kvbench
