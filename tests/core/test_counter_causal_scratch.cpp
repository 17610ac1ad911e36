// Counter-causal scores through the cached K/V equal a from-scratch recomputation written here
// independently: per token and per head, plain vectors — K/V and H^(L-1) recomputed by a causal pass
// over exactly the cached tokens at their original (gappy) positions, then the counter-causal pass.
#include "torch_catch.h"

#include <cmath>
#include <functional>
#include <numeric>

#include "engine/budget.h"
#include "policies/counter_causal_pass.h"
#include "model_test_util.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

using Vec = at::Tensor;  // 1-D float64

struct Scratch {
  const ModelConfig& c;
  const ModelWeights& w;

  Vec f64(const at::Tensor& t) const { return t.to(at::kDouble); }
  Vec rms(const Vec& x, const at::Tensor& weight) const {
    return f64(weight) * x / std::sqrt((x * x).mean().item<double>() + c.rms_norm_eps);
  }
  // RoPE of one head vector at position p, HF rotate_half: pairs (i, i + D/2) rotate by p·θ_i.
  Vec rope(const Vec& v, int64_t p, const at::Tensor& inv_freq) const {
    const int64_t half = c.head_dim / 2;
    Vec out = v.clone();
    for (int64_t i = 0; i < half; ++i) {
      const double a = p * inv_freq[i].item<double>(), x1 = v[i].item<double>(), x2 = v[i + half].item<double>();
      out[i] = x1 * std::cos(a) - x2 * std::sin(a);
      out[i + half] = x2 * std::cos(a) + x1 * std::sin(a);
    }
    return out;
  }
  Vec head(const Vec& projected, int64_t h) const { return projected.narrow(0, h * c.head_dim, c.head_dim); }
  Vec project(const at::Tensor& weight, const at::Tensor& bias, const Vec& x) const {
    Vec y = at::mv(f64(weight), x);
    return bias.defined() ? y + f64(bias) : y;
  }
  Vec mlp(int64_t l, const Vec& x) const {
    const LayerWeights& L = w.layers[l];
    const Vec h = rms(x, L.post_attention_norm);
    const Vec g = at::mv(f64(L.gate_proj), h);
    return x + at::mv(f64(L.down_proj), g / (1 + at::exp(-g)) * at::mv(f64(L.up_proj), h));
  }
  Vec query_head(int64_t l, const Vec& x, int64_t h, int64_t pos, const at::Tensor& inv_freq) const {
    const LayerWeights& L = w.layers[l];
    Vec q = head(project(L.q_proj, L.q_bias, rms(x, L.input_norm)), h);
    if (c.qk_norm) q = rms(q, L.q_norm);
    return rope(q, pos, inv_freq);
  }
  // Attention of one query head over the listed keys/values; zero when there are none.
  Vec attend(const Vec& q, const std::vector<Vec>& keys, const std::vector<Vec>& values) const {
    Vec out = at::zeros({c.head_dim}, at::kDouble);
    if (keys.empty()) return out;
    std::vector<double> s;
    for (const auto& k : keys) s.push_back(at::dot(q, k).item<double>() / std::sqrt(double(c.head_dim)));
    const double top = *std::max_element(s.begin(), s.end());
    double total = 0;
    for (double& v : s) total += (v = std::exp(v - top));
    for (size_t j = 0; j < keys.size(); ++j) out += s[j] / total * values[j];
    return out;
  }
};

// Whether, at layer l and KV head kv, token i's query may read token j's key/value (indices into ids).
using Reads = std::function<bool(int64_t l, int64_t kv, int64_t i, int64_t j)>;

// Per layer, per KV head, every token's K/V; and each token's input to the last layer.
struct CausalPass {
  std::vector<std::vector<std::vector<Vec>>> K, V;
  std::vector<Vec> last_input;
};

// The causal pass over ids at positions pos: token t reads the earlier tokens j ≤ t that `reads` allows.
CausalPass causal_pass(const Model& model, const std::vector<int64_t>& ids, const std::vector<int64_t>& pos,
                       const Reads& reads, const at::Tensor& inv_freq) {
  const ModelConfig& c = model.config();
  const Scratch s{c, model.weights()};
  const int64_t n = ids.size(), G = c.group_size();
  CausalPass out;
  out.K.assign(c.num_layers, std::vector<std::vector<Vec>>(c.num_kv_heads));
  out.V = out.K;
  out.last_input.resize(n);
  std::vector<Vec> x(n);
  for (int64_t t = 0; t < n; ++t) x[t] = s.f64(model.weights().embed_tokens[ids[t]]);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const LayerWeights& L = model.weights().layers[l];
    std::vector<Vec> next(n);
    for (int64_t t = 0; t < n; ++t) {
      if (l == c.num_layers - 1) out.last_input[t] = x[t];
      const Vec normed = s.rms(x[t], L.input_norm);
      for (int64_t kv = 0; kv < c.num_kv_heads; ++kv) {
        Vec k = s.head(s.project(L.k_proj, L.k_bias, normed), kv);
        if (c.qk_norm) k = s.rms(k, L.k_norm);
        out.K[l][kv].push_back(s.rope(k, pos[t], inv_freq));
        out.V[l][kv].push_back(s.head(s.project(L.v_proj, L.v_bias, normed), kv));
      }
      std::vector<Vec> heads;
      for (int64_t h = 0; h < c.num_heads; ++h) {
        std::vector<Vec> keys, values;
        for (int64_t j = 0; j <= t; ++j)
          if (reads(l, h / G, t, j)) {
            keys.push_back(out.K[l][h / G][j]);
            values.push_back(out.V[l][h / G][j]);
          }
        heads.push_back(s.attend(s.query_head(l, x[t], h, pos[t], inv_freq), keys, values));
      }
      next[t] = s.mlp(l, x[t] + s.project(L.o_proj, L.o_bias, at::cat(heads)));
    }
    x = next;
  }
  return out;
}

// The counter-causal pass of the tokens `rows`: token i's fresh query reads the cached K/V of every token j
// that `later` allows. Scores by row; `fast` = last layer only from H^(L-1), no MLP.
std::vector<double> counter_causal_pass(const Model& model, const CausalPass& past, const std::vector<int64_t>& ids,
                                    const std::vector<int64_t>& pos, const std::vector<int64_t>& rows,
                                    const Reads& later, bool fast, const at::Tensor& inv_freq) {
  const ModelConfig& c = model.config();
  const Scratch s{c, model.weights()};
  const int64_t G = c.group_size();
  std::vector<double> scores;
  for (int64_t i : rows) {
    Vec y = fast ? past.last_input[i] : s.f64(model.weights().embed_tokens[ids[i]]);
    for (int64_t l = fast ? c.num_layers - 1 : 0; l < c.num_layers; ++l) {
      const LayerWeights& L = model.weights().layers[l];
      std::vector<Vec> heads;
      for (int64_t h = 0; h < c.num_heads; ++h) {
        std::vector<Vec> keys, values;
        for (size_t j = 0; j < ids.size(); ++j)
          if (later(l, h / G, i, j)) {
            keys.push_back(past.K[l][h / G][j]);
            values.push_back(past.V[l][h / G][j]);
          }
        heads.push_back(s.attend(s.query_head(l, y, h, pos[i], inv_freq), keys, values));
      }
      y = y + s.project(L.o_proj, L.o_bias, at::cat(heads));
      if (!fast) y = s.mlp(l, y);
    }
    scores.push_back(at::dot(s.rms(y, model.weights().final_norm), s.f64(model.weights().lm_head[ids[i]])).item<double>());
  }
  return scores;
}

// Scores of every entry of a token-level cache, computed from scratch: entry i attends to entries j > i + min_gap.
std::vector<double> scratch_scores(const Model& model, const std::vector<int64_t>& ids, const std::vector<int64_t>& pos,
                                   int64_t min_gap, bool fast, const at::Tensor& inv_freq) {
  const CausalPass past = causal_pass(model, ids, pos, [](int64_t, int64_t, int64_t, int64_t) { return true; }, inv_freq);
  std::vector<int64_t> rows(ids.size());
  std::iota(rows.begin(), rows.end(), 0);
  const Reads later = [&](int64_t, int64_t, int64_t i, int64_t j) { return j > i + min_gap; };
  return counter_causal_pass(model, past, ids, pos, rows, later, fast, inv_freq);
}

// RoPE frequencies, written out again for the scratch side (no rope scaling in the models used here).
at::Tensor plain_inv_freq(const ModelConfig& c) {
  std::vector<double> f;
  for (int64_t i = 0; i < c.head_dim / 2; ++i) f.push_back(1.0 / std::pow(c.rope_theta, 2.0 * i / c.head_dim));
  return at::tensor(f, at::kDouble);
}

}  // namespace

TEST_CASE("counter-causal scores through cached K/V equal a from-scratch recomputation", "[counter-causal][reference]") {
  for (const char* name : {"stories260K", "tiny-qwen3"}) {
    KVBENCH_REQUIRE_SHARED(std::string("models/") + name);
    INFO(name);
    const Model model = Model::load(shared_dir() / "models" / name);
    REQUIRE_FALSE(model.config().rope_scaling);
    // Gappy original positions, as a cache looks after evictions.
    const std::vector<int64_t> ids = {1, 403, 407, 261, 378, 290, 33, 71, 400, 12, 260, 99};
    const std::vector<int64_t> pos = {0, 2, 3, 7, 8, 11, 15, 16, 20, 24, 25, 31};
    KvCache cache(cache_shape(model.config()), 1, model.options(), true);
    for (size_t t = 0; t < ids.size(); ++t)  // one token at a time, each at its original position
      model.forward(ids_tensor({ids[t]}), at::full({1, 1}, pos[t], at::kLong), cache);
    for (const char* policy_name : {"counter-causal", "counter-causal-fast"}) {
      for (int64_t min_gap : {0, 1, 3}) {
        INFO(policy_name << " min_gap " << min_gap);
        CacheBudget budget;
        budget.J = 4;
        budget.min_gap = min_gap;
        const at::Tensor got = make_policy(policy_name)->score({model, cache, budget})[0];
        const auto want = scratch_scores(model, ids, pos, min_gap, std::string(policy_name) == "counter-causal-fast",
                                         plain_inv_freq(model.config()));
        CHECK(max_abs_diff(got, at::tensor(want, at::kDouble)) < 1e-4);
      }
    }
  }
}

TEST_CASE("counter-causal query blocks do not change the scores", "[counter-causal]") {
  KVBENCH_REQUIRE_SHARED("models/tiny-llama3");
  const Model model = Model::load(shared_dir() / "models/tiny-llama3");
  at::manual_seed(163);  // a fixed cache: a failure replays
  KvCache cache(cache_shape(model.config()), 2, model.options(), true);
  model.forward(at::randint(3, 500, {2, 50}, at::kLong), at::arange(50, at::kLong).unsqueeze(0).expand({2, 50}), cache);
  const at::Tensor x = cache.last_layer_input();
  const int64_t last = model.config().num_layers - 1;
  const at::Tensor whole = counter_causal_attention_residual(model, cache, last, x, 1, 0, 1024);
  for (int64_t block : {1, 7, 49})
    CHECK(max_abs_diff(counter_causal_attention_residual(model, cache, last, x, 1, 0, block), whole) < 1e-5);
  // Entry blocks through the whole pass (every layer, MLPs): rows are independent of one another, but a
  // block's rows go through matrix products of another shape, whose float32 summation order differs, at
  // every layer; the scores are surprisals of ≈ 6 nats, so 1e-4 is ≈ 20 float32 ulps (1e-5 failed at 1.0014e-5).
  const at::Tensor input = model.embed(cache.token_ids());
  const at::Tensor scores = counter_causal_scores(model, cache, input, 0, true, 1, 1024);
  for (int64_t rows : {1, 7, 49}) CHECK(max_abs_diff(counter_causal_scores(model, cache, input, 0, true, 1, rows), scores) < 1e-4);
}

// Pyramid: a ragged cache built by hand (layers and heads holding different tokens, a token no layer
// holds, one only layer 0 holds, appends after the compaction). The pass runs over the tokens any layer
// holds; at layer l a token's query reads only the entries layer l / its KV head holds at later
// *positions* (> its own + min_gap). Recomputed here: the causal pass reads exactly what each layer held
// when each token was fed, the counter-causal pass what each layer holds at scoring time.
TEST_CASE("counter-causal over a ragged cache equals a from-scratch recomputation", "[counter-causal][reference][ragged]") {
  for (const char* name : {"stories260K", "tiny-qwen3"}) {
    KVBENCH_REQUIRE_SHARED(std::string("models/") + name);
    INFO(name);
    const Model model = Model::load(shared_dir() / "models" / name);
    const ModelConfig& c = model.config();
    const std::vector<int64_t> ids = {1, 403, 407, 261, 378, 290, 33, 71, 400, 12, 260, 99, 310, 45};
    const std::vector<int64_t> pos = {0, 2, 3, 7, 8, 11, 15, 16, 20, 24, 25, 31, 33, 34};
    const int64_t compacted_at = 12;  // tokens 0 … 11 fed, then the ragged compaction, then 12 and 13
    const auto kept = [&](int64_t l, int64_t kv, int64_t t) {
      return t != 4 && (t != 5 || l == 0) && (t + 3 * l + kv) % 4 != 1;
    };
    const auto held = [&](int64_t l, int64_t kv, int64_t t) { return t >= compacted_at || kept(l, kv, t); };
    KvCache cache(cache_shape(c), 1, model.options(), true);
    for (int64_t t = 0; t < compacted_at; ++t) model.forward(ids_tensor({ids[t]}), at::full({1, 1}, pos[t], at::kLong), cache);
    at::Tensor keep = at::full({1, c.num_layers, c.num_kv_heads, compacted_at}, -1, at::kLong);
    for (int64_t l = 0; l < c.num_layers; ++l)
      for (int64_t kv = 0; kv < c.num_kv_heads; ++kv) {
        int64_t m = 0;
        for (int64_t t = 0; t < compacted_at; ++t)
          if (kept(l, kv, t)) keep[0][l][kv][m++] = t;  // slot t holds token t
      }
    cache.compact_ragged(keep);
    for (int64_t t = compacted_at; t < static_cast<int64_t>(ids.size()); ++t)
      model.forward(ids_tensor({ids[t]}), at::full({1, 1}, pos[t], at::kLong), cache);
    // The tokens any layer holds: all but token 4.
    std::vector<int64_t> rows, row_positions;
    for (size_t t = 0; t < ids.size(); ++t)
      if (t != 4) rows.push_back(t), row_positions.push_back(pos[t]);
    REQUIRE(at::equal(cache.held_token_positions()[0], at::tensor(row_positions, at::kLong)));
    const at::Tensor inv_freq = plain_inv_freq(c);
    const CausalPass past = causal_pass(
        model, ids, pos, [&](int64_t l, int64_t kv, int64_t t, int64_t j) { return t < compacted_at || held(l, kv, j); },
        inv_freq);
    for (const char* policy_name : {"counter-causal", "counter-causal-fast"}) {
      for (int64_t min_gap : {0, 1, 3}) {
        INFO(policy_name << " min_gap " << min_gap);
        CacheBudget budget;
        budget.J = 4;
        budget.min_gap = min_gap;
        budget.allocator = "pyramid";
        const at::Tensor got = make_policy(policy_name)->score({model, cache, budget})[0];  // [L, KV, N]
        const Reads later = [&](int64_t l, int64_t kv, int64_t i, int64_t j) {
          return held(l, kv, j) && pos[j] > pos[i] + min_gap;
        };
        const std::vector<double> want = counter_causal_pass(model, past, ids, pos, rows, later,
                                                         std::string(policy_name) == "counter-causal-fast", inv_freq);
        // Every slot holding a token carries that token's score (one per token, whichever layer holds it).
        int64_t checked = 0;
        for (int64_t l = 0; l < c.num_layers; ++l) {
          const at::Tensor slots = cache.head_positions_padded(l)[0];  // [KV, N]
          for (int64_t kv = 0; kv < c.num_kv_heads; ++kv)
            for (int64_t slot = 0; slot < slots.size(1); ++slot) {
              const int64_t p = slots[kv][slot].item<int64_t>();
              if (p < 0) continue;
              const size_t row = std::find(row_positions.begin(), row_positions.end(), p) - row_positions.begin();
              CHECK(std::abs(got[l][kv][slot].item<double>() - want.at(row)) < 1e-4);
              ++checked;
            }
        }
        int64_t held_entries = 0;
        for (int64_t l = 0; l < c.num_layers; ++l)
          for (int64_t kv = 0; kv < c.num_kv_heads; ++kv)
            for (size_t t = 0; t < ids.size(); ++t) held_entries += held(l, kv, t);
        CHECK(checked == held_entries);
      }
    }
  }
}

TEST_CASE("counter-causal scores in 16-bit on the CPU follow the float32 scores", "[counter-causal]") {
  // libtorch 1.13 has no CPU float16 matrix product: the float16 pass attends in float32 (it threw before).
  // Each 16-bit step rounds (bfloat16: 2^-8 relative, float16: 2^-11), so the scores (surprisals of a few
  // nats) move: measured at most 0.21 (bfloat16) and 0.015 (float16); the tolerances leave 2–6× of that.
  for (const char* name : {"stories260K", "tiny-qwen3"}) {
    KVBENCH_REQUIRE_SHARED(std::string("models/") + name);
    const std::vector<int64_t> ids = {1, 403, 407, 261, 378, 290, 33, 71, 400, 12, 260, 99};
    const auto scores = [&](at::ScalarType dtype, const char* policy) {
      const Model model = Model::load(shared_dir() / "models" / name, at::kCPU, dtype);
      KvCache cache(cache_shape(model.config()), 1, model.options(), true);
      model.forward(ids_tensor(ids), at::arange(static_cast<int64_t>(ids.size()), at::kLong).unsqueeze(0), cache);
      CacheBudget budget;
      budget.J = 4;
      budget.min_gap = 1;
      return make_policy(policy)->score({model, cache, budget})[0];
    };
    for (const char* policy : {"counter-causal", "counter-causal-fast"}) {
      const at::Tensor want = scores(at::kFloat, policy);
      for (const auto& [dtype, tolerance] : {std::pair{at::kBFloat16, 0.5}, std::pair{at::kHalf, 0.1}}) {
        INFO(name << " " << policy << " " << dtype);
        const at::Tensor got = scores(dtype, policy);
        CHECK(max_abs_diff(got, want) < tolerance);
      }
    }
  }
}
