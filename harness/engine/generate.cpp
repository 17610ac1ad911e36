#include "engine/generate.h"

#include "engine/allocator.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <tuple>
#include <utility>

#include <c10/core/InferenceMode.h>

#include "common/error.h"

namespace kvbench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

GenerationSettings look_ahead_settings(const GenerationSettings& settings) {
  GenerationSettings look_ahead = settings;
  look_ahead.budget.h = std::numeric_limits<int32_t>::max();
  look_ahead.shadow_full = false;
  return look_ahead;
}

// The decode side of Algorithm 1: one token list per rollout, sampled together (each rollout its own RNG).
class SampleGeneration::Rollouts {
 public:
  Rollouts(const GenerationSettings& settings, const StopCheck& stop)
      : settings_(settings),
        stop_(stop),
        sampler_(settings.sampling, settings.rollouts),
        results_(settings.rollouts),
        active_(settings.rollouts, true) {}

  // Chooses each active rollout's next token from logits [B, 1, V] and applies the stop rules (eos and the
  // text rule only with `check_stops`; the length limit always).
  void choose(const at::Tensor& logits, bool check_stops = true) {
    std::vector<int64_t> rows;
    for (int64_t b = 0; b < settings_.rollouts; ++b)
      if (active_[b]) rows.push_back(b);
    const std::vector<int64_t> tokens = sampler_.next(logits.select(1, logits.size(1) - 1), rows);
    for (size_t i = 0; i < rows.size(); ++i) {
      const int64_t b = rows[i];
      auto& generated = results_[b].generated;
      generated.push_back(tokens[i]);
      const auto& eos = settings_.eos_ids;
      if (check_stops && std::find(eos.begin(), eos.end(), generated.back()) != eos.end()) finish(b, "eos");
      else if (check_stops && stop_ && stop_(b, generated)) finish(b, "stop");
      else if (static_cast<int64_t>(generated.size()) >= settings_.max_new_tokens) finish(b, "max_tokens");
    }
  }

  bool any_active() const { return std::find(active_.begin(), active_.end(), true) != active_.end(); }
  const std::vector<bool>& active() const { return active_; }

  // Every rollout's latest token, [B, 1]; finished rollouts keep feeding theirs (their output is final).
  at::Tensor last_tokens(at::Device device) const {
    std::vector<int64_t> tokens;
    for (const auto& r : results_) tokens.push_back(r.generated.back());
    return at::tensor(tokens, at::kLong).unsqueeze(1).to(device);
  }

  std::vector<RolloutResult> take() { return std::move(results_); }

 private:
  void finish(int64_t b, const char* reason) {
    active_[b] = false;
    results_[b].stop_reason = reason;
  }

  const GenerationSettings& settings_;
  const StopCheck& stop_;
  Sampler sampler_;
  std::vector<RolloutResult> results_;
  std::vector<bool> active_;
};

void validate(const GenerationSettings& s, int64_t prompt_length, const Policy& policy) {
  const CacheBudget& b = s.budget;
  if (prompt_length <= 0) fail("the prompt is empty");
  if (s.max_new_tokens <= 0) fail("max new tokens must be positive (got {})", s.max_new_tokens);
  if (s.rollouts <= 0) fail("rollouts must be positive (got {})", s.rollouts);
  if (b.h <= 0) fail("h (refresh interval / chunk size) must be positive (got {})", b.h);
  if (s.question_tokens < 0 || s.question_tokens >= prompt_length)
    fail("the question ({} tokens) must leave a context in the prompt ({} tokens)", s.question_tokens, prompt_length);
  if (!policy.evicts()) return;
  if (policy.needs().tokenizer && !s.tokenizer)
    fail("policy {} writes prompts of its own: it needs the job's tokenizer", policy.name());
  validate(s.phrase);
  if (b.recent < 0 || b.frozen < 0 || b.min_gap < 0) fail("recent, frozen and min-gap must not be negative");
  if (b.frozen >= prompt_length)
    fail("frozen prefix ({}) must be shorter than the prompt ({} tokens)", b.frozen, prompt_length);
  const KeepRule rule = policy.keep_rule(b);
  if (!b.own_budget) {
    if (b.J <= 0) fail("J (cache budget) must be positive (got {})", b.J);
    if (b.recent >= b.J) fail("recent window ({}) must be smaller than J ({})", b.recent, b.J);
    if (rule.recent > b.J)
      fail("policy {} always keeps the newest {} entries, more than J ({})", policy.name(), rule.recent, b.J);
  }
  // Positions move once, after the one compression (every row keeping as many entries: validate_allocator).
  if (rerotates(rule, b) && s.shadow_full)
    fail("--shadow full compares with a twin at the original positions, which key rerotation moves");
  if (rerotates(rule, b) && b.mode != CacheBudget::Mode::PrefillEnd)
    fail("key rerotation ({}) needs --mode prefill_end", b.rerotate ? "--rerotate-keys" : "policy " + policy.name());
}

namespace {

// An id past the embedding table would otherwise surface as libtorch's "index out of range in self".
void require_in_vocabulary(const std::vector<int64_t>& prompt, int64_t vocab_size) {
  for (std::size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || prompt[i] >= vocab_size)
      fail("prompt token {} (at position {}) is outside the model's vocabulary of {} ids (0 to {})", prompt[i], i,
           vocab_size, vocab_size - 1);
}

}  // namespace

SampleGeneration::SampleGeneration(const Model& model, Policy& policy, std::vector<int64_t> prompt,
                                   GenerationSettings settings, StopCheck stop)
    : model_(model),
      policy_(policy),
      settings_(std::move(settings)),
      stop_(std::move(stop)),
      cache_(cache_shape(model.config()), 1, model.options(), policy.needs().last_layer_input) {
  validate(settings_, static_cast<int64_t>(prompt.size()), policy_);
  validate_allocator(settings_.budget, settings_.phrase, policy_, model_.config());
  require_in_vocabulary(prompt, model_.config().vocab_size);
  result_.prompt = std::move(prompt);
  if (settings_.shadow_full) observers_.push_back(std::make_unique<ShadowRun>(model_, settings_.rollouts));
  policy_.reset();
  policy_.prepare({model_, result_.prompt, settings_.budget,
                   [this] {
                     const auto full = make_policy("full");
                     return generate(model_, *full, result_.prompt, look_ahead_settings(settings_), stop_)
                         .rollouts[0]
                         .generated;
                   },
                   settings_.tokenizer, settings_.chat, settings_.query_window});
}

SampleGeneration::~SampleGeneration() = default;

// Algorithm 2 (a step), after the forward pass: the policy observes it. Attention always runs over
// everything cached plus the new tokens, so a step never loses information — only refreshes do.
void SampleGeneration::observe(const ForwardResult& step) {
  policy_.observe(step, cache_);
  result_.peak_cache_size = std::max(result_.peak_cache_size, cache_.size());
  result_.peak_cache_bytes = std::max(result_.peak_cache_bytes, cache_.bytes_per_sequence());
}

void SampleGeneration::add_refresh(RefreshRecord record, const char* phase, int64_t index, int64_t processed) {
  record.phase = phase;
  record.step = index;
  record.processed = processed;
  if (record.rerotated) rope_shift_ = processed - cache_.size();
  result_.refreshes.push_back(std::move(record));
  for (auto& observer : observers_) observer->refreshed(cache_);
}

void SampleGeneration::prefill() {
  while (prefilling()) {
    const StepInput input = next_step();
    const ForwardResult step = model_.forward({input}).front();
    if (observe_step(step)) refresh_due({this});
    choose_next(step);
  }
}

// The rollouts fork from the prefilled prompt and choose their first tokens from its last logits.
void SampleGeneration::start_decoding(at::Tensor logits) {
  const int64_t R = settings_.rollouts;
  if (R > 1) {
    cache_.expand_batch(R);
    policy_.expand_batch(R);
    logits = logits.expand({R, logits.size(1), logits.size(2)});
  }
  rollouts_ = std::make_unique<Rollouts>(settings_, stop_);
  for (auto& observer : observers_) observer->prompt_done(logits.select(1, logits.size(1) - 1), R);
  // Reading the first token waits for the device: prefill time = time to first token.
  rollouts_->choose(logits, !settings_.reference.first_token_unchecked);
  result_.prefill_seconds = seconds_since(prefill_start_);
  decode_start_ = Clock::now();
}

ForwardOptions SampleGeneration::step_options() const {
  ForwardOptions options;
  options.attention = policy_.needs().step_attention;
  options.queries = policy_.needs().step_queries;
  options.attention_inputs = policy_.needs().step_attention_inputs;
  return options;
}

bool SampleGeneration::done() const { return rollouts_ && !rollouts_->any_active(); }

int64_t SampleGeneration::next_rows() const {
  if (!prefilling()) return settings_.rollouts;
  const int64_t P = static_cast<int64_t>(result_.prompt.size()), context = P - settings_.question_tokens;
  if (prompt_fed_ >= context) return P - prompt_fed_;  // the question, in one pass
  const int64_t chunk = settings_.budget.mode == CacheBudget::Mode::Chunked ? settings_.budget.h : context;
  return std::min(chunk, context - prompt_fed_);
}

StepInput SampleGeneration::next_step() {
  const at::Device device = model_.options().device();
  const int64_t P = static_cast<int64_t>(result_.prompt.size());
  // The context's next chunk of h (prefill_end: all of it), then the question, at their positions; after key
  // rerotation every position after the kept entries moves back by what the compression removed.
  if (prefilling()) {
    if (prompt_fed_ == 0) prefill_start_ = Clock::now();
    const int64_t length = next_rows();
    StepInput input{at::tensor(std::vector<int64_t>(result_.prompt.begin() + prompt_fed_,
                                                    result_.prompt.begin() + prompt_fed_ + length),
                               at::kLong)
                        .unsqueeze(0)
                        .to(device),
                    (at::arange(prompt_fed_, prompt_fed_ + length, at::kLong) - rope_shift_).unsqueeze(0).to(device), &cache_,
                    step_options()};
    std::tie(fed_ids_, fed_positions_) = std::tie(input.ids, input.positions);
    return input;
  }
  ++step_;
  const int64_t position = P + step_ - 1 - rope_shift_;
  StepInput input{rollouts_->last_tokens(device), at::full({settings_.rollouts, 1}, position, at::kLong).to(device),
                  &cache_, {}};
  input.options = step_options();
  if (!observers_.empty()) std::tie(fed_ids_, fed_positions_) = std::tie(input.ids, input.positions);
  return input;
}

bool SampleGeneration::prefill_refresh_point() const {
  const int64_t P = static_cast<int64_t>(result_.prompt.size());
  if (prompt_fed_ > P - settings_.question_tokens) return false;  // the question is fed after the compression
  const bool lone_chunk = chunks_fed_ == 1 && prompt_fed_ == P;
  return !(lone_chunk && settings_.budget.mode == CacheBudget::Mode::Chunked &&
           settings_.reference.lone_chunk_unrefreshed);
}

bool SampleGeneration::observe_step(const ForwardResult& step) {
  if (prefilling()) {
    prompt_fed_ += fed_ids_.size(1);
    ++chunks_fed_;
    for (auto& observer : observers_) observer->prompt_chunk(fed_ids_, fed_positions_, cache_);
    observe(step);
    if (!policy_.evicts() || !prefill_refresh_point()) return false;
    const CacheBudget& budget = settings_.budget;
    if (budget.own_budget || cache_.size() > budget.J + budget.frozen) return true;
    // Within budget nothing is evicted, but an accumulating policy (h2o) still scores, as the paper's hook does.
    if (policy_.needs().every_refresh_point) policy_.score({model_, cache_, budget});
    return false;
  }
  cache_size_sum_ += static_cast<double>(cache_.size());
  entries_sum_ += cache_.mean_entries_per_head();
  for (auto& observer : observers_)  // before any refresh of this step, as the step's logits were computed
    observer->decode_step(fed_ids_, fed_positions_, step.logits.select(1, step.logits.size(1) - 1), cache_,
                          rollouts_->active());
  observe(step);
  rollouts_->choose(step.logits);  // from the logits computed before this step's refresh
  // The paper's code has token-level caches only; a per-head one's entries hold no ids its scores read.
  if (settings_.reference.predicted_ids && !cache_.per_head())
    cache_.relabel_newest(rollouts_->last_tokens(cache_.keys(0).device()).squeeze(1));
  // prefill_end refreshes once, after the prompt (kvpress's one-shot compression, and the paper's code).
  return policy_.evicts() && settings_.budget.mode == CacheBudget::Mode::Chunked &&
         processed() % settings_.budget.h == 0;
}

void SampleGeneration::refresh_due(const std::vector<SampleGeneration*>& due) {
  if (due.empty()) return;
  std::vector<RefreshJob> jobs;
  for (SampleGeneration* g : due) jobs.push_back({g->cache_, g->policy_, g->settings_.budget, g->settings_.phrase});
  std::vector<RefreshRecord> records = refresh_together(due.front()->model_, jobs);
  for (size_t i = 0; i < due.size(); ++i) {
    SampleGeneration& g = *due[i];
    if (g.prefilling())
      g.add_refresh(std::move(records[i]), "prefill", g.chunks_fed_ - 1, g.processed());
    else
      g.add_refresh(std::move(records[i]), "decode", g.step_, g.processed());
  }
}

void SampleGeneration::choose_next(const ForwardResult& step) {
  if (prefilling()) {
    if (prompt_fed_ == static_cast<int64_t>(result_.prompt.size())) start_decoding(step.logits);
    return;
  }
  if (done()) result_.decode_seconds = seconds_since(decode_start_);
}

GenerationResult SampleGeneration::take() {
  result_.mean_cache_size = step_ ? cache_size_sum_ / static_cast<double>(step_) : static_cast<double>(cache_.size());
  result_.mean_entries_per_head = step_ ? entries_sum_ / static_cast<double>(step_) : cache_.mean_entries_per_head();
  result_.rollouts = rollouts_->take();
  for (auto& observer : observers_) observer->report(result_);
  return std::move(result_);
}

GenerationResult generate(const Model& model, Policy& policy, const std::vector<int64_t>& prompt,
                          const GenerationSettings& settings, const StopCheck& stop) {
  SampleGeneration generation(model, policy, prompt, settings, stop);
  generate_continuously(model, 1, {&generation});
  return generation.take();
}

int64_t default_batch(const Model& model) { return model.options().device().is_cpu() ? 16 : 64; }

int64_t max_rows_per_pass(const Model& model) {
  return model.options().device().is_cpu() ? 2048 : std::numeric_limits<int64_t>::max();
}

void generate_continuously(const Model& model, int64_t batch, const std::function<SampleGeneration*()>& next,
                           const std::function<void(SampleGeneration*)>& finished, int64_t max_rows) {
  // Generation records no autograd: in inference mode libtorch skips views' autograd metadata and
  // version counters on every op (2–3 % of a decode step of Qwen2.5-0.5B, measured step by step).
  const c10::InferenceMode inference;
  std::vector<SampleGeneration*> active;
  if (max_rows <= 0) max_rows = max_rows_per_pass(model);
  bool exhausted = false;
  while (true) {
    // A free slot takes the next sample: its prompt chunks share the passes with the others' chunks and
    // decode steps, as a decode step does.
    while (!exhausted && static_cast<int64_t>(active.size()) < batch) {
      SampleGeneration* generation = next();
      if (!generation) {
        exhausted = true;
        break;
      }
      active.push_back(generation);
    }
    if (active.empty()) return;
    // This pass: every decode step, and prompt chunks in order while they fit max_rows (the first always does,
    // so every prompt gets its turn).
    std::vector<SampleGeneration*> stepping;
    int64_t prompt_rows = 0;
    for (SampleGeneration* generation : active) {
      if (generation->prefilling()) {
        const int64_t rows = generation->next_rows();
        if (prompt_rows > 0 && prompt_rows + rows > max_rows) continue;
        prompt_rows += rows;
      }
      stepping.push_back(generation);
    }
    std::vector<StepInput> inputs;
    for (SampleGeneration* generation : stepping) inputs.push_back(generation->next_step());
    const std::vector<ForwardResult> steps = model.forward(inputs);
    std::vector<SampleGeneration*> due;
    for (size_t i = 0; i < stepping.size(); ++i)
      if (stepping[i]->observe_step(steps[i])) due.push_back(stepping[i]);
    SampleGeneration::refresh_due(due);
    for (size_t i = 0; i < stepping.size(); ++i) stepping[i]->choose_next(steps[i]);
    const auto first_done = std::stable_partition(active.begin(), active.end(), [](auto* g) { return !g->done(); });
    for (auto it = first_done; it != active.end(); ++it) finished(*it);
    active.erase(first_done, active.end());
  }
}

void generate_continuously(const Model& model, int64_t batch, const std::vector<SampleGeneration*>& generations,
                           int64_t max_rows) {
  size_t handed = 0;
  generate_continuously(
      model, batch, [&] { return handed < generations.size() ? generations[handed++] : nullptr; },
      [](SampleGeneration*) {}, max_rows);
}

}  // namespace kvbench
