// Algorithm 1 (the generate loop) and Algorithm 2 (a step) of the counter-causal paper, for any policy.
// One sample's generation is a SampleGeneration, stepped from outside, so that several samples can share
// every forward pass — prompt chunks and decode steps alike (generate_continuously) — while each keeps its
// own cache, refresh schedule and policy state: exactly what it has when generated alone.
//
//   prefill: the prompt in chunks of h at positions 0..P−1, a refresh point after each chunk: a refresh
//            while the cache holds more than J + frozen entries (mode prefill_end: one pass, one point);
//   decode:  token 1 is chosen from the prompt's last logits; at step s = 1, 2, … the previous token
//            is fed at position P+s−1, the next token is chosen from its logits, and then a refresh runs
//            when (P+s) % h == 0 (mode chunked only: prefill_end never refreshes in decode).
// At a refresh point within budget nothing is evicted, but a policy that accumulates (h2o) still scores.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/observer.h"
#include "engine/refresh.h"
#include "engine/sampler.h"
#include "engine/shadow.h"
#include "policies/policy.h"

namespace kvbench {

// Accidents of the counter-causal paper's code (hooks.py: generate_with_kv_hook), reproduced only on request
// (the `reference` profile, run/profile.h): each makes its tables come out as published, none is a convention.
struct ReferenceQuirks {
  // A decode step's entry carries the id of the token predicted from it, not of the token fed: the loop
  // appends the predicted token to the id list and the fed token's K/V to the cache. The counter-causal
  // passes embed and score those ids.
  bool predicted_ids = false;
  // The first generated token is never checked against eos or the stop rule (the loop checks from the second).
  bool first_token_unchecked = false;
  // A prompt of one chunk (P ≤ h) gets no refresh point before decoding (the loop calls the hook after the
  // first chunk only when more follow).
  bool lone_chunk_unrefreshed = false;
};

struct GenerationSettings {
  CacheBudget budget;
  ReferenceQuirks reference;
  PhraseRules phrase;                // --smooth / --keep-span (engine/score_transforms.h)
  SamplingParams sampling;
  int64_t max_new_tokens = 256;
  int64_t rollouts = 1;              // sequences decoded together from one prefilled prompt
  // The prompt's last tokens that no prefill refresh sees (kvpress's pipeline: the question and answer prefix,
  // fed in one pass after the context's compression); 0: every prompt token is a candidate.
  int64_t question_tokens = 0;
  // What a policy may read of how the prompt was written (Preparation): the tokenizer, chat or raw, and the
  // question's tokens at the end of the compressed part (PolicyNeeds::query_window).
  const Tokenizer* tokenizer = nullptr;
  bool chat = false;
  int64_t query_window = 0;
  std::vector<int64_t> eos_ids;
  bool shadow_full = false;          // --shadow full: compare every step with a full-cache twin (engine/shadow.h)
};

struct RolloutResult {
  std::vector<int64_t> generated;
  std::string stop_reason;  // "eos", "stop", "max_tokens"
};

struct GenerationResult {
  std::vector<int64_t> prompt;
  std::vector<RolloutResult> rollouts;
  std::vector<RefreshRecord> refreshes;
  double mean_cache_size = 0.0;  // realised cache size seen by decode steps (slots of the widest layer)
  int64_t peak_cache_size = 0;
  // Entries (padding excluded) per layer and KV head seen by decode steps, averaged: what a ragged
  // allocator really holds; and the most key/value bytes one sequence held (padding slots included).
  double mean_entries_per_head = 0.0;
  int64_t peak_cache_bytes = 0;
  double prefill_seconds = 0.0, decode_seconds = 0.0;
  std::vector<StepFidelity> fidelity;  // per rollout with shadow_full (else empty)
  std::vector<LostAttention> lost_attention;  // per refresh (parallel to refreshes) with shadow_full, else empty
};

// Throws kvbench::Error on impossible settings (J ≤ 0, h ≤ 0, recent ≥ J, frozen ≥ prompt length, ...).
void validate(const GenerationSettings& settings, int64_t prompt_length, const Policy& policy);

// Algorithm 1 for one sample, as steps (next_step → a forward pass → observe_step → refresh_due if due →
// choose_next) until done(): first the prompt's chunks, then decode steps.
class SampleGeneration {
 public:
  // Validates the settings (kvbench::Error) and lets the policy prepare; `policy` must outlive this.
  SampleGeneration(const Model& model, Policy& policy, std::vector<int64_t> prompt, GenerationSettings settings,
                   StopCheck stop = {});
  SampleGeneration(const SampleGeneration&) = delete;
  SampleGeneration& operator=(const SampleGeneration&) = delete;
  ~SampleGeneration();

  // The prompt's steps alone: its chunks of h (a refresh after each while over budget), then the first
  // token of each rollout.
  void prefill();
  bool done() const;
  // Algorithm 2's input: while prefilling, the prompt's next chunk at its positions; at decode step s,
  // every rollout's previous token at position P+s−1.
  StepInput next_step();
  // That step's output, taken in three parts so that samples refreshing at the same point are scored
  // together: the policy observes it, and after a decode step each rollout chooses its next token (true
  // when a refresh is due: a prompt chunk left more than J + frozen entries, or (P+s) % h == 0); the due
  // samples' refresh (Algorithm 3, one refresh_together call for all of them); after the prompt's last
  // chunk the rollouts fork and choose their first tokens.
  bool observe_step(const ForwardResult& step);
  static void refresh_due(const std::vector<SampleGeneration*>& due);
  void choose_next(const ForwardResult& step);
  GenerationResult take();
  // Rows the next step feeds: the prompt's next chunk while prefilling, then one per rollout.
  int64_t next_rows() const;
  bool prefilling() const { return !rollouts_; }

 private:
  class Rollouts;
  void observe(const ForwardResult& step);
  void add_refresh(RefreshRecord record, const char* phase, int64_t index, int64_t processed);
  bool prefill_refresh_point() const;  // after the chunk just fed
  // Tokens fed so far: prompt chunks while prefilling, then the prompt and one per decode step.
  int64_t processed() const { return prefilling() ? prompt_fed_ : static_cast<int64_t>(result_.prompt.size()) + step_; }
  void start_decoding(at::Tensor logits);
  ForwardOptions step_options() const;  // what every forward captures for the policy

  const Model& model_;
  Policy& policy_;
  GenerationSettings settings_;
  StopCheck stop_;
  KvCache cache_;
  std::unique_ptr<Rollouts> rollouts_;
  std::vector<std::unique_ptr<GenerationObserver>> observers_;  // the shadow run with settings.shadow_full
  at::Tensor fed_ids_, fed_positions_;  // the step in flight (a prompt chunk or a decode step)
  GenerationResult result_;
  int64_t prompt_fed_ = 0, chunks_fed_ = 0;  // prompt tokens and chunks fed so far
  int64_t step_ = 0;  // decode steps fed so far
  int64_t rope_shift_ = 0;  // after key rerotation: positions the cache's RoPE moved back (fed tokens follow it)
  double cache_size_sum_ = 0.0, entries_sum_ = 0.0;
  std::chrono::steady_clock::time_point prefill_start_, decode_start_;
};

GenerationResult generate(const Model& model, Policy& policy, const std::vector<int64_t>& prompt,
                          const GenerationSettings& settings, const StopCheck& stop = {});

// What an offline policy looks ahead at (Preparation::full_cache_continuation): the generation's own settings
// (same sampling, length, stop ids and rollouts, so rollout 0 continues the prompt as the full cache would),
// never refreshed, and without what only records the run and cannot change its tokens: --shadow full would
// decode a second full-cache twin of a full-cache run.
GenerationSettings look_ahead_settings(const GenerationSettings& settings);

// Samples decoded together by default: enough sequences that a decode step's weight reads are shared by
// many tokens (see `kvbench bench throughput`): 16 on CPU, 64 on CUDA.
int64_t default_batch(const Model& model);

// Rows one forward pass takes at most (several prompts' chunks together; a larger chunk goes alone): on the CPU
// 2048, since a pass of many long prompts allocates its activations above glibc's 32 MiB mmap threshold afresh
// for every product and pays for the pages again each time (six needle prompts of 1–2K tokens: 29 % of the time
// in the kernel clearing pages); no cap on CUDA.
int64_t max_rows_per_pass(const Model& model);

// Continuous batching: up to `batch` samples decode together, one forward pass per step for all of them.
// `next` hands out the next sample's generation (nullptr when none is left), which is prefilled alone
// when a slot is free; `finished` receives each generation as it completes (in completion order). A pass
// takes every decode step and the prompt chunks in order while they fit max_rows_per_pass; the other prompts
// step in a later pass (each sample's result is independent of what shares its pass: no result changes).
// `max_rows` 0: max_rows_per_pass(model).
void generate_continuously(const Model& model, int64_t batch, const std::function<SampleGeneration*()>& next,
                           const std::function<void(SampleGeneration*)>& finished, int64_t max_rows = 0);
// The same over a list of generations, handed out in order; returns when every one is done.
void generate_continuously(const Model& model, int64_t batch, const std::vector<SampleGeneration*>& generations,
                           int64_t max_rows = 0);

}  // namespace kvbench
