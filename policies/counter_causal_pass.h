// The counter-causal pass shared by `counter-causal` and `counter-causal-fast`: fresh queries of the
// cached tokens (RoPE at their original positions) attend to the *cached* keys/values of later
// entries only (slot j > i + min_gap). Since every layer's keys/values come from the cache, the entries
// are independent of one another: the pass runs a block of entries at a time through all its layers,
// and attends a smaller block of query rows at a time, so scoring n entries never holds an n×n score
// matrix per head (users run n = 16K–128K) and the working set stays in cache.
//
// Ragged caches (the pyramid allocator): layers hold different entries, so the pass runs over the tokens
// any layer holds (KvCache::held_token_ids, ascending by position), and at layer l each token's fresh
// query attends only to the entries cached at layer l whose *position* is > its own + min_gap (padding
// never). "Later" and min_gap are on positions here, on slots in a token-level cache; the two agree for
// min_gap = 0 and an unragged layer, where the pass computes exactly the token-level products. Each token
// gets one score, which every layer holding it shares: each layer keeps its own best among its entries.
#pragma once
#include "policies/policy.h"

namespace kvbench {

// One layer's counter-causal attention of the entries first_row … first_row + rows − 1 of `cache` (its held
// tokens, KvCache::held_token_ids), from their
// query heads q [B, rows, H, D] before RoPE (Model::query_heads): [B, rows, H·D]. Query rows are attended
// `block_rows` at a time (0: as many as keep one block's mask within a few MiB, at least 32).
at::Tensor counter_causal_attention(const Model& model, const KvCache& cache, int64_t layer, const at::Tensor& q,
                                int64_t min_gap, int64_t first_row = 0, int64_t block_rows = 0);

// The same as a residual: x [B, rows, hidden] → x + o_proj(attention).
at::Tensor counter_causal_attention_residual(const Model& model, const KvCache& cache, int64_t layer, const at::Tensor& x,
                                         int64_t min_gap, int64_t first_row = 0, int64_t block_rows = 0);

constexpr int64_t kPassRows = 512;  // see counter_causal_scores_together

// One sample of a scoring pass: its cache, the input of the pass's first layer for its entries
// [B, n, hidden], its min_gap.
struct CounterCausalSample {
  const KvCache& cache;
  at::Tensor input;
  int64_t min_gap = 0;
};

// Scores [B, n] (float32) of each sample, from its input through the last layer (each with its MLP when
// `with_mlp`). A sample's entries run in blocks of `pass_rows`: 512 rows keep the weight products at full
// speed while a block's activations (rows × intermediate floats) stay small enough for malloc to reuse,
// instead of mapping fresh pages that fault in on every layer. Blocks of several samples (samples that
// refresh at the same step) are packed as rows of one matrix, whose weight products take each block as a
// row segment of its own (model/linear.h: RowSegments), while attention runs per block over its own
// sample's cache. So each sample's scores are bitwise those of its own pass
// (tests/core/test_refresh_together.cpp).
// `q_norm` false: the fresh queries skip Qwen3's q_norm, as the paper's code computes them.
std::vector<at::Tensor> counter_causal_scores_together(const Model& model, const std::vector<CounterCausalSample>& samples,
                                                   int64_t first_layer, bool with_mlp, int64_t pass_rows = kPassRows,
                                                   bool q_norm = true);

// counter_causal_scores_together for one sample.
at::Tensor counter_causal_scores(const Model& model, const KvCache& cache, const at::Tensor& input, int64_t first_layer,
                             bool with_mlp, int64_t min_gap, int64_t pass_rows = kPassRows);

// Floating-point operations of one counter-causal scoring pass over n entries through `layers` layers
// (the last ones), with or without each layer's MLP — the work it must do, a multiply-add counted as 2:
//   per layer   2·n·hidden·(H·D [q_proj] + H·D [o_proj] (+ 3·intermediate [gate, up, down] with MLP))
//             + 4·H·D·P  (q·k and p·v over the P allowed (query, key) pairs; P = m(m+1)/2, m = n − min_gap − 1)
//   once        2·n·hidden (each entry's own-token row of the LM head).
// Norms, RoPE, softmax, biases and residual adds are not counted; neither are k/v projections (the
// pass reuses the cached K/V) nor masked-out products.
double counter_causal_pass_flops(const ModelConfig& config, int64_t n, int64_t min_gap, int64_t layers, bool with_mlp);

// Where a counter-causal policy's pass starts: the input [B, n, hidden] of layer `first_layer`.
struct CounterCausalPass {
  at::Tensor input;
  int64_t first_layer = 0;
  bool with_mlp = true;
};

// counter-causal and counter-causal-fast: the scores of one counter-causal pass, which has no per-sample
// state, so samples that refresh at the same step share one (counter_causal_scores_together). Entries with no
// future (the newest min_gap + 1) always stay. Scores are [B, n] token-level, [B, L, KV, N] for a ragged cache.
class CounterCausalBase : public Policy {
 public:
  // Knob q_norm=false: the fresh queries as the paper's code projects them, without Qwen3's q_norm (the
  // reference profile sets it).
  explicit CounterCausalBase(const PolicyOptions& options) : q_norm_(options.knobs.boolean("q_norm", true)) {}
  KeepRule keep_rule(const CacheBudget& budget) const override;
  ScoreKind score_kind() const override { return ScoreKind::PerToken; }
  at::Tensor score(const ScoringContext& context) override;
  std::vector<at::Tensor> score_together(const std::vector<SampleScoring>& samples) override;

 protected:
  virtual CounterCausalPass pass(const ScoringContext& context) const = 0;

 private:
  bool q_norm_;
};

}  // namespace kvbench
