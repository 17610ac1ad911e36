// The policy interface. A policy *scores* cache entries (and may observe decoding steps); the budget
// allocator (engine/budget.h) turns scores into keep sets, so every scorer combines with every
// allocation. A policy never reaches into the engine: it sees a narrow ScoringContext.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/kv_cache.h"
#include "common/spec.h"
#include "model/model.h"

namespace kvbench {

class Tokenizer;

// The cache budget of the paper: persistent memory J, refresh every h tokens, a frozen prefix that
// never leaves, a recent window that always stays, and min_gap for the counter-causal mask.
struct CacheBudget {
  int64_t J = 0;
  // A ratio budget's compression ratio R (J = ⌊n·(1 − R)⌋ of this prompt's n tokens), 0 for a token budget: what
  // kvpress's presses count in other units than tokens (chunkkv's chunks, compactor's blending) read.
  double ratio = 0;
  int64_t h = 0;
  int64_t recent = 0;
  int64_t frozen = 0;
  int64_t min_gap = 0;
  int64_t sinks = 4;                    // streaming / kvpop attention sinks
  enum class Mode { Chunked, PrefillEnd } mode = Mode::Chunked;
  // How J is spread over layers and KV heads: an allocator's name (engine/allocators/registry.cpp), and
  // whether it gives layers and heads sizes of their own (then scores are [B, L, KV, N] of a ragged cache).
  // resolve_budget (run/job.h) sets these from the allocator; a policy reads only `ragged`.
  std::string allocator = "uniform";  // the allocator's spec, knobs included ("pyramid:ratio=3")
  bool ragged = false;
  bool own_budget = false;  // the allocator keeps by a rule of its own, J is 0 (Allocator::own_budget)
  bool rerotate = false;  // --rerotate-keys: KeepRule::rerotate for any policy
};

// What the engine must capture for a policy during causal steps.
struct PolicyNeeds {
  bool last_layer_input = false;                   // H^(L-1) per cached entry (counter-causal-fast)
  AttentionCapture step_attention = AttentionCapture::None;  // attention of every forward (tova, h2o-true)
  bool step_queries = false;  // every forward's queries before RoPE (expected-attention)
  bool step_attention_inputs = false;  // every forward's attention inputs, after each layer's input norm (kvzap)
  bool every_refresh_point = false;  // scored at every refresh point, also within budget (h2o's accumulator)
  // The question inside the compressed prompt, tokenized apart from the context before it (kvpress's FinchPress
  // reads it after a delimiter token): Preparation::query_window says how many tokens it has.
  bool query_window = false;
  // Writes prompts of its own (kvzip's reconstruction request): generation needs the job's tokenizer.
  bool tokenizer = false;
};

enum class Granularity { Token, PerKvHead };

// What a policy's scores can serve a budget allocator (engine/allocator.h); each kind serves what the
// kinds before it serve, so an allocator states the least it needs:
//   ByPosition  nothing that ranks a ragged cache's entries: it keeps by position (sliding, streaming)
//   PerToken    one score per token, also for a ragged cache (every layer's copy of a token shares it)
//   PerKvHead   a score of its own for every layer and KV head of a ragged cache
enum class ScoreKind { ByPosition, PerToken, PerKvHead };

// How scores become a keep set (see engine/budget.h).
struct KeepRule {
  bool keep_lowest = false;     // counter-causal keeps the least predictable entries
  int64_t recent = 0;           // effective recent window (always kept)
  Granularity granularity = Granularity::Token;
  int64_t sinks = 0;            // entries right after the frozen prefix always kept (counted in J)
  // After the refresh each row's kept keys are rotated to the positions 0, 1, … in order, and the tokens fed after
  // them follow at the next positions (kvpress's KeyRerotationPress; also --rerotate-keys for any policy).
  bool rerotate = false;
};

// Whether a refresh rerotates the kept keys: the policy's rule or the job's --rerotate-keys.
inline bool rerotates(const KeepRule& rule, const CacheBudget& budget) { return rule.rerotate || budget.rerotate; }

// Text-level stop (stop strings, a complete \boxed{}): called with a rollout's tokens so far.
using StopCheck = std::function<bool(int64_t rollout, const std::vector<int64_t>& generated)>;

struct ScoringContext {
  const Model& model;
  const KvCache& cache;
  const CacheBudget& budget;
};

// What a policy may learn before generation starts (Policy::prepare): the prompt and the budget, and for an
// offline policy the future — rollout 0's continuation of the prompt as this generation decodes it with a full
// cache (the same sampling, length and stop rule, never refreshed), generated when it is called.
struct Preparation {
  const Model& model;
  const std::vector<int64_t>& prompt;
  const CacheBudget& budget;
  std::function<std::vector<int64_t>()> full_cache_continuation;
  // How the prompt was written, for a policy that writes prompts of its own (kvzip's reconstruction request):
  // the job's tokenizer (null where generation runs without one) and whether the prompt is a chat turn.
  const Tokenizer* tokenizer = nullptr;
  bool chat = false;
  // With PolicyNeeds::query_window: how many of the compressed prompt's last tokens state the question.
  int64_t query_window = 0;
};

class Policy;
struct PolicyOptions;

// One sample's share of a scoring call made for several samples: its own policy instance (holding that
// sample's state) and its context.
struct SampleScoring {
  Policy& policy;
  ScoringContext context;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // What it keeps, in one line (`kvbench list policies --markdown`: the README's policy table).
  virtual std::string summary() const = 0;
  virtual PolicyNeeds needs() const { return {}; }
  virtual KeepRule keep_rule(const CacheBudget& budget) const { return {false, budget.recent, Granularity::Token}; }
  // The recent window when the user gives none (the reference: 0, H2O: J/2).
  virtual int64_t default_recent(int64_t J) const { return 0; }
  // False for `full`: the cache is never refreshed.
  virtual bool evicts() const { return true; }
  // The work of one scoring of n entries in FLOP, counted as `kvbench bench refresh` counts it, so that
  // `bench throughput` can give every policy's refresh share; nullopt = not counted (a few products over
  // the cache's keys, no GEMM worth counting).
  virtual std::optional<double> scoring_flops(const ModelConfig& config, int64_t n, const CacheBudget& budget) const {
    return std::nullopt;
  }
  // Above ByPosition: score() gives [B, L, KV, N] scores for a ragged cache (budget.ragged: layers of
  // different sizes, padding slots at position -1) and on_compact accepts -1 padding in keep.
  virtual ScoreKind score_kind() const { return ScoreKind::ByPosition; }
  // One score per entry: [B, N] (token level) or [B, L, KV, N] (per KV head); undefined = no scores
  // (the allocator then keeps by position alone, e.g. sliding).
  virtual at::Tensor score(const ScoringContext& context) = 0;
  // The scores of samples that refresh at the same step, in order; each has its own instance of this
  // policy (samples[i].policy), this one among them. By default each scores itself; a policy whose score
  // is a model pass with no per-sample state overrides it to run one pass over every sample's entries.
  virtual std::vector<at::Tensor> score_together(const std::vector<SampleScoring>& samples) {
    std::vector<at::Tensor> scores;
    for (const SampleScoring& sample : samples) scores.push_back(sample.policy.score(sample.context));
    return scores;
  }
  // Called after every causal forward (prefill chunk or decode step) with what needs() asked for.
  virtual void observe(const ForwardResult& step, const KvCache& cache) {}
  // The cache kept `keep` ([B, M] token level, [B, L, KV, M] per head, -1 = padding when ragged); compact any state.
  virtual void on_compact(const at::Tensor& keep) {}
  // Sequence 0's state is replicated into `batch` rollouts after the shared prefill.
  virtual void expand_batch(int64_t batch) {}
  // A new generation starts (state from the previous sample is dropped unless a policy says otherwise).
  virtual void reset() {}
  // True when the state left by one sample changes the next (the paper's h2o hook, reused over a dataset):
  // the runner then runs one instance over the samples in order, one at a time.
  virtual bool carries_across_samples() const { return false; }
  // Called once before generation starts. Offline policies (future-oracle) look ahead here: they may ask for
  // the full-cache continuation of the same prompt to learn what the future attends to.
  virtual void prepare(const Preparation& preparation) {}

  // The spec this instance was made from in normal form ("snapkv:window=32": knobs at their defaults left
  // out; common/spec.h) — its identity in job labels, results and refresh grouping — and every knob's value,
  // defaults filled in. Set by make_policy; an instance made otherwise is known by name().
  std::string spec() const { return spec_.empty() ? name() : spec_; }
  const nlohmann::json& knob_settings() const { return knob_settings_; }

 private:
  friend std::unique_ptr<Policy> make_policy(const std::string& spec);
  std::string spec_;
  nlohmann::json knob_settings_ = nlohmann::json::object();
};

// What a policy's factory gets: the knobs of `--policy name:key=value,...`, which it reads
// (SpecItems::integer etc.: it sets defaults and ranges); make_policy refuses any knob it did not read.
// Whatever one policy alone needs (random's seed, kvpop's scorer file, h2o's carry) is one of its knobs.
struct PolicyOptions {
  SpecItems knobs;
};

// `spec` is a policy's name, optionally with knobs: "name:key=value,key=value" (common/spec.h). Throws
// kvbench::Error for an unknown name, and for a knob its policy does not know or a value out of its range.
std::unique_ptr<Policy> make_policy(const std::string& spec);
std::vector<std::string> policy_names();

// A policy added while the program runs (the Python module's kvbench.register_policy), usable by name like a
// built-in one; registering a name again replaces the earlier factory. Throws for a built-in name.
using PolicyFactory = std::function<std::unique_ptr<Policy>(const PolicyOptions&)>;
void register_policy(const std::string& name, PolicyFactory factory);

}  // namespace kvbench
