// Ragged caches (pyramid / ada allocators): layers of different sizes, heads padded within a layer.
// The logits must equal a from-scratch masked pass over the *uncompacted* sequence in which each layer
// and KV head attends only to the entries its ragged cache holds — written here without the cache,
// the attention kernel or Model::attend — through a prefill chunk, decode steps (the decode kernel),
// appends after a ragged compaction, and a second ragged compaction.
#include "torch_catch.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "engine/allocator.h"
#include "engine/allocators/pyramid.h"
#include "model/random_model.h"
#include "run/job.h"
#include "model_test_util.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

template <class T>
using PerRow = std::vector<std::vector<std::vector<T>>>;  // [sequence][layer][KV head]
using Keep = PerRow<std::vector<int64_t>>;                // slot indices kept by each row

// The test's own account of a batch's cache layout: what compact_ragged and appends should leave in each
// slot (an original position, -1 = padding).
struct Layout {
  PerRow<std::vector<int64_t>> slots;

  void append(int64_t position) {
    for (auto& sequence : slots)
      for (auto& layer : sequence)
        for (auto& row : layer) row.push_back(position);
  }
  // Each layer is padded with -1 to its longest row over every sequence and head.
  size_t longest(const Keep& keep, size_t l) const {
    size_t n = 0;
    for (const auto& sequence : keep)
      for (const auto& k : sequence[l]) n = std::max(n, k.size());
    return n;
  }
  void compact(const Keep& keep) {
    for (size_t b = 0; b < slots.size(); ++b)
      for (size_t l = 0; l < slots[b].size(); ++l)
        for (size_t h = 0; h < slots[b][l].size(); ++h) {
          std::vector<int64_t> next;
          for (int64_t slot : keep[b][l][h]) next.push_back(slots[b][l][h][slot]);
          next.resize(longest(keep, l), -1);
          slots[b][l][h] = next;
        }
  }
  at::Tensor keep_tensor(const Keep& keep) const {  // [B, L, KV, M]
    size_t widest = 0;
    for (size_t l = 0; l < keep[0].size(); ++l) widest = std::max(widest, longest(keep, l));
    at::Tensor out = at::full({static_cast<int64_t>(keep.size()), static_cast<int64_t>(keep[0].size()),
                               static_cast<int64_t>(keep[0][0].size()), static_cast<int64_t>(widest)}, -1, at::kLong);
    for (size_t b = 0; b < keep.size(); ++b)
      for (size_t l = 0; l < keep[b].size(); ++l)
        for (size_t h = 0; h < keep[b][l].size(); ++h)
          for (size_t i = 0; i < keep[b][l][h].size(); ++i) out[b][l][h][i] = keep[b][l][h][i];
    return out;
  }
};

// A random subset of each row's held slots, of a size that differs per sequence, layer and head.
Keep random_keep(const Layout& layout, std::mt19937& rng) {
  Keep keep(layout.slots.size());
  for (size_t b = 0; b < layout.slots.size(); ++b)
    for (const auto& layer : layout.slots[b]) {
      keep[b].emplace_back();
      for (const auto& row : layer) {
        std::vector<int64_t> held;
        for (size_t s = 0; s < row.size(); ++s)
          if (row[s] >= 0) held.push_back(static_cast<int64_t>(s));
        std::shuffle(held.begin(), held.end(), rng);
        held.resize(std::uniform_int_distribution<size_t>(2, held.size() - 1)(rng));
        std::sort(held.begin(), held.end());
        keep[b].back().push_back(held);
      }
    }
  return keep;
}

// Attention of the whole sequence with an explicit mask allowed [L, KV, T, T] (query row, key column):
// plain matmuls over repeated K/V heads, nothing cached.
at::Tensor masked_logits(const Model& model, const std::vector<int64_t>& ids, const at::Tensor& allowed) {
  const ModelConfig& c = model.config();
  const int64_t T = static_cast<int64_t>(ids.size()), G = c.num_heads / c.num_kv_heads;
  at::Tensor x = model.embed(ids_tensor(ids));
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const at::Tensor normed = model.rms_norm(x, model.weights().layers[l].input_norm);
    const QueryKeyValue qkv = model.project(l, normed, position_range(0, T), /*previous_ids (no key smear)=*/{});
    const at::Tensor k = qkv.k.repeat_interleave(G, 1), v = qkv.v.repeat_interleave(G, 1);  // [1, H, T, D]
    at::Tensor scores = at::matmul(qkv.q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(c.head_dim));
    scores.masked_fill_(allowed[l].repeat_interleave(G, 0).unsqueeze(0).logical_not(), -INFINITY);
    const at::Tensor out = at::matmul(at::softmax(scores, -1), v).transpose(1, 2).reshape({1, T, c.num_heads * c.head_dim});
    x = model.mlp_residual(l, model.attention_residual(l, x, out));
  }
  return model.logits(x)[0];
}

}  // namespace

TEST_CASE("ragged cache: prefill chunk and decode equal a masked pass over the uncompacted sequence", "[cache][ragged]") {
  ModelConfig config = tiny_model_config(ModelFamily::Llama, 32, 4, 2, 50);
  config.num_layers = 3;
  const Model model = random_model(config, 7, at::kCPU, at::kFloat);
  const int64_t L = config.num_layers, KV = config.num_kv_heads;
  std::mt19937 rng(11);
  // Two sequences in one batch, each with its own tokens and its own ragged keep sets.
  const int64_t B = 2;
  std::vector<std::vector<int64_t>> ids(B);
  for (auto& sequence : ids)
    for (int i = 0; i < 40; ++i) sequence.push_back(std::uniform_int_distribution<int64_t>(3, 49)(rng));
  KvCache cache(cache_shape(config), B, model.options(), false);
  Layout layout{PerRow<std::vector<int64_t>>(B, std::vector<std::vector<std::vector<int64_t>>>(L, std::vector<std::vector<int64_t>>(KV)))};
  at::Tensor allowed = at::zeros({B, L, KV, 40, 40}, at::kBool);
  int64_t fed = 0;
  std::vector<at::Tensor> logits;  // per chunk [B, T, V], from the ragged cache
  // Feeds ids[fed, fed + count): each new row sees what its layer/head holds plus the chunk up to itself.
  auto feed = [&](int64_t count) {
    at::Tensor chunk = at::empty({B, count}, at::kLong);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t t = 0; t < count; ++t) chunk[b][t] = ids[b][fed + t];
      for (int64_t l = 0; l < L; ++l)
        for (int64_t h = 0; h < KV; ++h)
          for (int64_t t = fed; t < fed + count; ++t) {
            for (int64_t p : layout.slots[b][l][h])
              if (p >= 0) allowed[b][l][h][t][p] = true;
            for (int64_t j = fed; j <= t; ++j) allowed[b][l][h][t][j] = true;
          }
    }
    logits.push_back(model.forward(chunk, position_range(fed, count).expand({B, count}), cache, {true}).logits);
    for (int64_t t = fed; t < fed + count; ++t) layout.append(t);
    fed += count;
  };
  auto compact = [&] {
    const Keep keep = random_keep(layout, rng);
    cache.compact_ragged(layout.keep_tensor(keep));
    layout.compact(keep);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t l = 0; l < L; ++l)
        for (int64_t h = 0; h < KV; ++h)
          CHECK(at::equal(cache.head_positions(l)[b][h], at::tensor(layout.slots[b][l][h], at::kLong)));
  };
  feed(12);
  feed(8);
  compact();
  REQUIRE(cache.ragged());
  feed(3);               // a prefill chunk over the ragged cache (Model::attend with a per-head mask)
  feed(1);               // decode steps (the decode kernel, padding masked)
  feed(1);
  compact();             // a second ragged compaction: padding left in the middle by appends goes away
  feed(1);
  feed(4);

  const at::Tensor got = at::cat(logits, 1);  // [B, fed, V]
  for (int64_t b = 0; b < B; ++b) {
    const at::Tensor expected = masked_logits(model, std::vector<int64_t>(ids[b].begin(), ids[b].begin() + fed),
                                              allowed[b].narrow(2, 0, fed).narrow(3, 0, fed));
    CHECK(max_abs_diff(got[b].narrow(0, 20, fed - 20), expected.narrow(0, 20, fed - 20)) < 1e-5);
    CHECK(max_abs_diff(got[b].narrow(0, 0, 20), expected.narrow(0, 0, 20)) < 1e-5);  // before any compaction
  }
}

TEST_CASE("pyramid budgets: linear from first to last layer, summing exactly to L·J", "[allocator]") {
  // Exact values 2J/(1+r)·(r − (r−1)l/(L−1)) for J = 64, L = 8, r = 3: 96, 86.86, 77.71, 68.57, 59.43, 50.29,
  // 41.14, 32 (worked by hand); floors sum to 509, the 3 missing units go to the largest fractions (.86, .71, .57).
  CHECK(pyramid_budgets(64, 8, 3.0, 0) == std::vector<int64_t>{96, 87, 78, 69, 59, 50, 41, 32});
  CHECK(pyramid_budgets(10, 1, 3.0, 0) == std::vector<int64_t>{10});
  CHECK(pyramid_budgets(7, 3, 1.0, 0) == std::vector<int64_t>{7, 7, 7});
  for (int64_t L : {2, 5, 12, 32})
    for (double r : {1.0, 1.5, 2.0, 7.0}) {
      const auto b = pyramid_budgets(100, L, r, 0);
      CHECK(std::accumulate(b.begin(), b.end(), int64_t{0}) == 100 * L);
      CHECK(std::is_sorted(b.rbegin(), b.rend()));
      CHECK(std::abs(static_cast<double>(b.front()) / static_cast<double>(b.back()) - r) < 0.05 * r);
    }
  CHECK_THROWS_WITH(pyramid_budgets(16, 4, 7.0, 8), Catch::Contains("layer 3") && Catch::Contains("below the 8"));
  CHECK_THROWS_WITH(pyramid_budgets(16, 4, 0.5, 0), Catch::Contains("pyramid ratio"));
}

TEST_CASE("validate_allocator: phrase rules need the uniform allocator", "[allocator]") {
  const ModelConfig config = tiny_model_config(ModelFamily::Llama, 32, 4, 2, 50);
  CacheBudget budget;
  budget.J = 32;
  budget.h = 8;
  const std::string needs_uniform = "they need --allocator uniform";
  for (const auto& [policy_name, allocator] : {std::pair{"counter-causal", "pyramid"},
                                               std::pair{"h2o-true", "ada"}}) {
    INFO(policy_name);
    const auto policy = make_policy(policy_name);
    budget.allocator = allocator;
    CHECK_NOTHROW(validate_allocator(budget, PhraseRules{}, *policy, config));
    CHECK_THROWS_WITH(validate_allocator(budget, PhraseRules{3, 1}, *policy, config), Catch::Contains(needs_uniform));
    CHECK_THROWS_WITH(validate_allocator(budget, PhraseRules{1, 2}, *policy, config), Catch::Contains(needs_uniform));
    budget.allocator = "uniform";
    CHECK_NOTHROW(validate_allocator(budget, PhraseRules{3, 2}, *policy, config));
  }
}

TEST_CASE("allocator in the job identity: absent for uniform, its knobs in its normal-form spec", "[allocator][job]") {
  JobConfig job;
  job.policy = "h2o-true";
  const json uniform = to_json(job);
  CHECK_FALSE(uniform.contains("allocator"));  // identities of jobs from before allocators are unchanged
  job.budget.allocator = "pyramid:ratio=3";
  CHECK(to_json(job).at("allocator") == "pyramid:ratio=3");
  const JobConfig back = job_from_json(to_json(job), "test");
  CHECK(back.budget.allocator == "pyramid:ratio=3");
  // The old field is an alias of the knob: the same job, one identity.
  CHECK(job_from_json(json{{"allocator", "pyramid"}, {"pyramid_ratio", 3}}, "old").budget.allocator ==
        "pyramid:ratio=3");
  CHECK(job_from_json(json{{"allocator", "ada"}, {"pyramid_ratio", 3}}, "old").budget.allocator == "ada");
  CHECK(with_normal_specs(job_from_json(json{{"allocator", "pyramid"}, {"pyramid_ratio", 2}}, "old")).budget.allocator ==
        "pyramid");  // the default ratio is no knob of the label
  CHECK(with_normal_specs(back).budget.allocator == "pyramid:ratio=3");
  CHECK(current_form(uniform) == uniform);
  CHECK_THROWS_WITH(job_from_json(json{{"allocator", 3}}, "cfg"), Catch::Contains("allocator"));
}

// The token table of a ragged cache (what counter-causal's pass runs over): the tokens any layer or head
// still holds, ascending by position, per sequence, the shorter union padded at its end with position -1;
// H^(L-1) rows follow their tokens; appends go after the union.
TEST_CASE("ragged cache keeps ids, positions and H^(L-1) of the tokens any layer holds", "[cache][ragged]") {
  ModelConfig config = tiny_model_config(ModelFamily::Llama, 32, 4, 2, 50);
  config.num_layers = 2;
  const Model model = random_model(config, 3, at::kCPU, at::kFloat);
  KvCache cache(cache_shape(config), 2, model.options(), /*keep_last_layer_input=*/true);
  const at::Tensor ids = at::tensor({10, 11, 12, 13, 14, 15, 20, 21, 22, 23, 24, 25}, at::kLong).view({2, 6});
  model.forward(ids, at::arange(6, at::kLong).unsqueeze(0).expand({2, 6}).contiguous(), cache);
  const at::Tensor input = cache.last_layer_input().clone();  // [2, 6, hidden]
  // Sequence 0 holds {0, 1, 3, 5} across layers and heads (2 and 4 nowhere); sequence 1 holds all but 1.
  const std::vector<std::vector<std::vector<std::vector<int64_t>>>> keep = {
      {{{0, 1}, {0, 3}}, {{5}, {1, 5}}},
      {{{0, 2, 3}, {4}}, {{5, 3}, {2}}}};
  at::Tensor keep_tensor = at::full({2, 2, 2, 3}, -1, at::kLong);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t l = 0; l < 2; ++l)
      for (int64_t h = 0; h < 2; ++h) {
        std::vector<int64_t> slots = keep[b][l][h];
        std::sort(slots.begin(), slots.end());
        for (size_t m = 0; m < slots.size(); ++m) keep_tensor[b][l][h][m] = slots[m];
      }
  cache.compact_ragged(keep_tensor);
  REQUIRE(cache.held_tokens() == 5);
  CHECK(at::equal(cache.held_token_positions(), at::tensor({0, 1, 3, 5, -1, 0, 2, 3, 4, 5}, at::kLong).view({2, 5})));
  CHECK(at::equal(cache.held_token_ids().narrow(1, 0, 4)[0], at::tensor({10, 11, 13, 15}, at::kLong)));
  CHECK(at::equal(cache.held_token_ids()[1], at::tensor({20, 22, 23, 24, 25}, at::kLong)));
  const at::Tensor rows0 = at::tensor({0, 1, 3, 5}, at::kLong), rows1 = at::tensor({0, 2, 3, 4, 5}, at::kLong);
  CHECK(at::equal(cache.held_last_layer_input()[0].narrow(0, 0, 4), input[0].index_select(0, rows0)));
  CHECK(at::equal(cache.held_last_layer_input()[1], input[1].index_select(0, rows1)));
  CHECK_FALSE(cache.last_layer_input().defined());  // a slot-aligned H^(L-1) no longer exists
  model.forward(at::tensor({30, 31}, at::kLong).view({2, 1}), at::full({2, 1}, 6, at::kLong), cache);
  REQUIRE(cache.held_tokens() == 6);
  CHECK(at::equal(cache.held_token_positions().select(1, 5), at::tensor({6, 6}, at::kLong)));
  CHECK(at::equal(cache.held_token_ids().select(1, 5), at::tensor({30, 31}, at::kLong)));
  // A second compaction, by slot. Layer 0 now holds positions (sequence 0) [0 1 -1 6], [0 3 -1 6] and
  // (sequence 1) [0 2 3 6], [4 -1 -1 6]; layer 1 [5 -1 6], [1 5 6] and [3 5 6], [2 -1 6].
  at::Tensor second = at::full({2, 2, 2, 1}, -1, at::kLong);
  const int64_t slots[2][2][2] = {{{1, 3}, {2, 2}}, {{0, 0}, {1, 0}}};  // → sequence 0 {1, 6}, 1 {0, 4, 5, 2}
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t l = 0; l < 2; ++l)
      for (int64_t h = 0; h < 2; ++h) second[b][l][h][0] = slots[b][l][h];
  cache.compact_ragged(second);
  REQUIRE(cache.held_tokens() == 4);
  CHECK(at::equal(cache.held_token_positions(), at::tensor({1, 6, -1, -1, 0, 2, 4, 5}, at::kLong).view({2, 4})));
  CHECK(at::equal(cache.held_token_ids()[0].narrow(0, 0, 2), at::tensor({11, 30}, at::kLong)));
  CHECK(at::equal(cache.held_token_ids()[1], at::tensor({20, 22, 24, 25}, at::kLong)));
}
