#include "policies/counter_causal_pass.h"

#include <algorithm>
#include <cmath>

namespace kvbench {

namespace {

// Query rows attended at a time: as many as keep one call's mask (rows × keys per KV head) within a few
// MiB, but at least 32. Model::attend (model/block_attention.h on the CPU) splits them into blocks of its
// own and spreads those over the cores.
constexpr int64_t kMaskBlockBytes = int64_t{16} << 20, kMinBlockRows = 32;
// The activations of one pack of several samples' blocks (rows × the MLP's width, float32) at most.
constexpr int64_t kPackBytes = int64_t{8} << 20;

// Attention of `rows` query rows q [B, H, rows, D], entries first … first + rows − 1, each of which has at
// least one allowed key, over the keys/values of entries first + min_gap + 1 … n − 1: [B, rows, H, D].
// In those keys' own coordinates, row r may see key c iff c ≥ r, so the products left of the first
// row's first key are never computed.
at::Tensor attend_later_entries(const Model& model, const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                                int64_t first, int64_t min_gap) {
  const int64_t B = q.size(0), H = q.size(1), rows = q.size(2), D = q.size(3);
  const int64_t begin = first + min_gap + 1, N = keys.size(2) - begin;
  const at::Tensor columns = at::arange(N, q.options().dtype(at::kLong));
  const at::Tensor allowed = columns.unsqueeze(0) >= columns.narrow(0, 0, rows).unsqueeze(1);  // [rows, N]
  return model.attend(q, keys.narrow(2, begin, N), values.narrow(2, begin, N), allowed).view({B, rows, H, D});
}

// A ragged cache's layer: query rows q [B, H, rows, D] of tokens at positions row_positions [B, rows]
// (ascending; -1 = a sequence's padding row) attend to the entries this layer holds at positions
// > p_i + min_gap (key_positions [B, KV, N]; padding slots at -1 never). The products start at the first
// slot any row may see, so an unragged layer computes exactly what attend_later_entries computes (the
// same products, the same masked entries); a row with no allowed key in some head gets 0 there.
at::Tensor attend_later_positions(const Model& model, const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                                  const at::Tensor& key_positions, const at::Tensor& row_positions, int64_t min_gap) {
  const int64_t B = q.size(0), H = q.size(1), rows = q.size(2), D = q.size(3);
  const at::Tensor row_limit = row_positions.masked_fill(row_positions.lt(0), std::numeric_limits<int64_t>::max() - min_gap);
  const at::Tensor allowed = key_positions.unsqueeze(2).gt((row_limit + min_gap).view({B, 1, rows, 1}));  // [B, KV, rows, N]
  const at::Tensor seen = allowed.flatten(0, 2).any(0);
  if (!seen.any().item<bool>()) return at::zeros({B, rows, H, D}, q.options());
  const int64_t begin = seen.to(at::kLong).argmax().item<int64_t>(), N = keys.size(2) - begin;
  return model.attend(q, keys.narrow(2, begin, N), values.narrow(2, begin, N), allowed.narrow(-1, begin, N))
      .view({B, rows, H, D});
}

// Row i's own-token logit at its final hidden state x[i] (float32): one LM-head row per entry, never n × vocab.
at::Tensor own_token_logits(const Model& model, const at::Tensor& ids, const at::Tensor& x) {
  const at::Tensor normed = model.rms_norm(x, model.weights().final_norm).to(at::kFloat);
  const at::Tensor rows = at::embedding(model.weights().lm_head, ids).to(at::kFloat);
  return (normed * rows).sum(-1);
}

// A block of one sample's entries [begin, begin + rows): the unit its pass runs alone, and the unit that
// passes of several samples pack. `product_rows` = rollouts × rows, its rows in the weight products.
struct Block {
  size_t sample;
  int64_t begin, rows, product_rows;
};

// Groups every sample's blocks into packs that run through the layers together, up to `pack_rows` product
// rows a pack (a block alone may have more). Packing changes no result: the weight products take each
// block's rows as a segment of its own (model/linear.h: RowSegments), the rest is row by row or per block.
std::vector<std::vector<Block>> pack_blocks(const std::vector<CounterCausalSample>& samples, int64_t pass_rows,
                                            int64_t pack_rows) {
  std::vector<std::vector<Block>> packs;
  int64_t rows = 0;
  for (size_t s = 0; s < samples.size(); ++s) {
    const int64_t n = samples[s].cache.held_tokens(), B = samples[s].input.size(0);
    for (int64_t begin = 0; begin < n; begin += pass_rows) {
      const Block block{s, begin, std::min(pass_rows, n - begin), B * std::min(pass_rows, n - begin)};
      if (packs.empty() || rows + block.product_rows > pack_rows) {
        packs.emplace_back();
        rows = 0;
      }
      packs.back().push_back(block);
      rows += block.product_rows;
    }
  }
  return packs;
}

at::Tensor pack_rows(const std::vector<at::Tensor>& parts) { return parts.size() == 1 ? parts.front() : at::cat(parts); }

// One pack's blocks through layers first_layer … L−1: the weight products, norms and MLP over all their
// rows at once, attention per block over its own sample's cache. Writes each block's scores into `scores`.
void run_pack(const Model& model, const std::vector<CounterCausalSample>& samples, const std::vector<Block>& pack,
              int64_t first_layer, bool with_mlp, bool q_norm, std::vector<at::Tensor>& scores) {
  const int64_t hidden = model.config().hidden_size;
  std::vector<at::Tensor> inputs, ids;
  RowSegments segments;
  for (const Block& b : pack) {
    inputs.push_back(samples[b.sample].input.narrow(1, b.begin, b.rows).reshape({b.product_rows, hidden}));
    ids.push_back(samples[b.sample].cache.held_token_ids().narrow(1, b.begin, b.rows).reshape({b.product_rows}));
    segments.push_back(b.product_rows);
  }
  at::Tensor x = pack_rows(inputs);  // [rows of every block, hidden]
  for (int64_t l = first_layer; l < model.config().num_layers; ++l) {
    const at::Tensor q = model.query_heads(l, model.rms_norm(x, model.weights().layers[l].input_norm), segments, q_norm);
    std::vector<at::Tensor> attended;
    int64_t row = 0;
    for (const Block& b : pack) {
      const CounterCausalSample& sample = samples[b.sample];
      // Contiguous: the block's queries have one memory layout whatever they were packed with.
      const at::Tensor block_q = q.narrow(0, row, b.product_rows).contiguous().unflatten(0, {sample.input.size(0), b.rows});
      attended.push_back(counter_causal_attention(model, sample.cache, l, block_q, sample.min_gap, b.begin).flatten(0, 1));
      row += b.product_rows;
    }
    x = model.attention_residual(l, x, pack_rows(attended), segments);
    if (with_mlp) x = model.mlp_residual(l, x, segments);
  }
  const at::Tensor logits = own_token_logits(model, pack_rows(ids), x);
  int64_t row = 0;
  for (const Block& b : pack) {
    at::Tensor& out = scores[b.sample];
    out.narrow(1, b.begin, b.rows).copy_(logits.narrow(0, row, b.product_rows).view({out.size(0), b.rows}));
    row += b.product_rows;
  }
}

}  // namespace

at::Tensor counter_causal_attention(const Model& model, const KvCache& cache, int64_t layer, const at::Tensor& q_heads,
                                int64_t min_gap, int64_t first_row, int64_t block_rows) {
  const int64_t B = q_heads.size(0), rows = q_heads.size(1);
  const ModelConfig& c = model.config();
  const at::Tensor row_positions = cache.held_token_positions().narrow(1, first_row, rows);
  // Padding rows (-1, ragged caches only) take RoPE at 0; nothing reads their output.
  const at::Tensor q = model.rope(q_heads.transpose(1, 2), row_positions.clamp_min(0));
  // CPU float16 attends in float32 inside Model::attend (libtorch 1.13 has no such product).
  const at::Tensor keys = cache.keys(layer), values = cache.values(layer);
  const int64_t n = keys.size(2);
  // Rows with a key to attend to come first: the newest have no later entry (token level: the newest
  // min_gap + 1 slots; ragged: positions beyond the layer's newest − min_gap − 1, and padding rows).
  const int64_t with_keys =
      cache.ragged() ? row_positions.ge(0)
                           .logical_and(row_positions.lt(cache.head_positions(layer).max() - min_gap))
                           .any(0)
                           .sum()
                           .item<int64_t>()
                     : std::clamp<int64_t>(n - min_gap - 1 - first_row, 0, rows);
  if (block_rows <= 0) block_rows = std::max(kMinBlockRows, kMaskBlockBytes / (B * c.num_kv_heads * n));
  at::Tensor attended = at::zeros({B, rows, c.num_heads, c.head_dim}, q.options());
  for (int64_t begin = 0; begin < with_keys; begin += block_rows) {
    const int64_t count = std::min(block_rows, with_keys - begin);
    const at::Tensor block_q = q.narrow(2, begin, count);
    attended.narrow(1, begin, count)
        .copy_(cache.ragged() ? attend_later_positions(model, block_q, keys, values, cache.head_positions(layer),
                                                       row_positions.narrow(1, begin, count), min_gap)
                              : attend_later_entries(model, block_q, keys, values, first_row + begin, min_gap));
  }
  return attended.view({B, rows, c.num_heads * c.head_dim});
}

at::Tensor counter_causal_attention_residual(const Model& model, const KvCache& cache, int64_t layer, const at::Tensor& x,
                                         int64_t min_gap, int64_t first_row, int64_t block_rows) {
  const at::Tensor q = model.query_heads(layer, model.rms_norm(x, model.weights().layers[layer].input_norm));
  return model.attention_residual(layer, x, counter_causal_attention(model, cache, layer, q, min_gap, first_row, block_rows));
}

std::vector<at::Tensor> counter_causal_scores_together(const Model& model, const std::vector<CounterCausalSample>& samples,
                                                   int64_t first_layer, bool with_mlp, int64_t pass_rows,
                                                   bool q_norm) {
  std::vector<at::Tensor> scores;
  for (const CounterCausalSample& s : samples)
    scores.push_back(at::empty({s.input.size(0), s.cache.held_tokens()}, s.input.options().dtype(at::kFloat)));
  // A pack's activations (rows × the MLP's width) within a few MiB, as one block of pass_rows of a 0.5B model.
  const int64_t pack_rows = std::max(pass_rows, kPackBytes / (4 * std::max(model.config().intermediate_size,
                                                                          model.config().hidden_size)));
  for (const std::vector<Block>& pack : pack_blocks(samples, pass_rows, pack_rows))
    run_pack(model, samples, pack, first_layer, with_mlp, q_norm, scores);
  return scores;
}

at::Tensor counter_causal_scores(const Model& model, const KvCache& cache, const at::Tensor& input, int64_t first_layer,
                             bool with_mlp, int64_t min_gap, int64_t pass_rows) {
  return counter_causal_scores_together(model, {{cache, input, min_gap}}, first_layer, with_mlp, pass_rows).front();
}

double counter_causal_pass_flops(const ModelConfig& config, int64_t n, int64_t min_gap, int64_t layers, bool with_mlp) {
  const double hidden = static_cast<double>(config.hidden_size), width = static_cast<double>(config.num_heads * config.head_dim);
  const double m = static_cast<double>(std::max<int64_t>(0, n - min_gap - 1)), pairs = m * (m + 1) / 2;
  const double weights_per_row = 2 * hidden * width + (with_mlp ? 3 * hidden * config.intermediate_size : 0.0);
  const double per_layer = 2 * n * weights_per_row + 4 * width * pairs;
  return layers * per_layer + 2 * n * hidden;
}

namespace {
// A ragged cache's token scores [B, U] (one per token any layer holds) → [B, L, KV, N]: every slot gets
// its token's score, padding 0, so each layer ranks the same scores among the entries it holds.
at::Tensor scores_per_slot(const KvCache& cache, const at::Tensor& token_scores) {
  const at::Tensor positions = cache.held_token_positions().to(token_scores.device());
  const int64_t past_last = positions.max().item<int64_t>() + 1;  // one column past every position collects padding
  const auto column = [&](const at::Tensor& p) { return p.masked_fill(p.lt(0), past_last); };
  const at::Tensor by_position = at::zeros({cache.batch(), past_last + 1}, token_scores.options())
                                     .scatter_(1, column(positions), token_scores)
                                     .index_fill_(1, at::tensor({past_last}, positions.options()), 0.0);
  std::vector<at::Tensor> layers;
  for (int64_t l = 0; l < cache.num_layers(); ++l) {
    const at::Tensor slots = column(cache.head_positions_padded(l).to(token_scores.device()));  // [B, KV, N]
    layers.push_back(by_position.unsqueeze(1).expand({cache.batch(), slots.size(1), by_position.size(1)}).gather(2, slots));
  }
  return at::stack(layers, 1);
}
}  // namespace

KeepRule CounterCausalBase::keep_rule(const CacheBudget& budget) const {
  return {/*keep_lowest=*/true, std::max(budget.recent, budget.min_gap + 1), Granularity::Token};
}

at::Tensor CounterCausalBase::score(const ScoringContext& context) { return score_together({{*this, context}}).front(); }

// The samples' policies are all of this kind, and the pass has no state: this instance runs it for all.
std::vector<at::Tensor> CounterCausalBase::score_together(const std::vector<SampleScoring>& samples) {
  std::vector<CounterCausalSample> passes;
  CounterCausalPass shape;
  for (const SampleScoring& s : samples) {
    shape = pass(s.context);
    passes.push_back({s.context.cache, shape.input, s.context.budget.min_gap});
  }
  std::vector<at::Tensor> scores =
      counter_causal_scores_together(samples.front().context.model, passes, shape.first_layer, shape.with_mlp,
                                 kPassRows, q_norm_);
  for (size_t i = 0; i < samples.size(); ++i)
    if (samples[i].context.cache.ragged()) scores[i] = scores_per_slot(samples[i].context.cache, scores[i]);
  return scores;
}

}  // namespace kvbench
