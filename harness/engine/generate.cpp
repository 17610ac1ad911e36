#include "engine/generate.h"

#include <algorithm>
#include <chrono>

#include "common/error.h"

namespace kvbench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Algorithm 2 (a step): feed tokens [B, T] at their original positions [B, T]; attention always runs
// over everything cached plus the new tokens, so a step never loses information — only refreshes do.
at::Tensor step(const Model& model, KvCache& cache, Policy& policy, const at::Tensor& ids, const at::Tensor& positions) {
  ForwardOptions options;
  options.attention = policy.needs().step_attention;
  ForwardResult result = model.forward(ids, positions, cache, options);
  policy.observe(result, cache);
  return result.logits;
}

// The decode side of Algorithm 1: one sampler and one token list per rollout.
class Rollouts {
 public:
  Rollouts(const GenerationSettings& settings, const StopCheck& stop)
      : settings_(settings), stop_(stop), results_(settings.rollouts), active_(settings.rollouts, true) {
    for (int64_t b = 0; b < settings.rollouts; ++b) samplers_.emplace_back(settings.sampling, b);
  }

  // Chooses each active rollout's next token from logits [B, 1, V] and applies the stop rules.
  void choose(const at::Tensor& logits) {
    const at::Tensor last = logits.select(1, logits.size(1) - 1);
    for (int64_t b = 0; b < settings_.rollouts; ++b) {
      if (!active_[b]) continue;
      auto& generated = results_[b].generated;
      generated.push_back(samplers_[b].next(last[b]));
      const auto& eos = settings_.eos_ids;
      if (std::find(eos.begin(), eos.end(), generated.back()) != eos.end()) finish(b, "eos");
      else if (stop_ && stop_(b, generated)) finish(b, "stop");
      else if (static_cast<int64_t>(generated.size()) >= settings_.max_new_tokens) finish(b, "max_tokens");
    }
  }

  bool any_active() const { return std::find(active_.begin(), active_.end(), true) != active_.end(); }

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
  std::vector<Sampler> samplers_;
  std::vector<RolloutResult> results_;
  std::vector<bool> active_;
};

}  // namespace

void validate(const GenerationSettings& s, int64_t prompt_length, const Policy& policy) {
  const CacheBudget& b = s.budget;
  if (prompt_length <= 0) fail("the prompt is empty");
  if (s.max_new_tokens <= 0) fail("max new tokens must be positive (got {})", s.max_new_tokens);
  if (s.rollouts <= 0) fail("rollouts must be positive (got {})", s.rollouts);
  if (b.h <= 0) fail("h (refresh interval / chunk size) must be positive (got {})", b.h);
  if (!policy.evicts()) return;
  if (b.J <= 0) fail("J (cache budget) must be positive (got {})", b.J);
  if (b.recent < 0 || b.frozen < 0 || b.min_gap < 0) fail("recent, frozen and min-gap must not be negative");
  if (b.recent >= b.J) fail("recent window ({}) must be smaller than J ({})", b.recent, b.J);
  if (b.frozen >= prompt_length)
    fail("frozen prefix ({}) must be shorter than the prompt ({} tokens)", b.frozen, prompt_length);
  const KeepRule rule = policy.keep_rule(b);
  if (rule.recent > b.J)
    fail("policy {} always keeps the newest {} entries, more than J ({})", policy.name(), rule.recent, b.J);
}

GenerationResult generate(const Model& model, Policy& policy, const std::vector<int64_t>& prompt,
                          const GenerationSettings& settings, const StopCheck& stop) {
  const int64_t P = static_cast<int64_t>(prompt.size());
  validate(settings, P, policy);
  const CacheBudget& budget = settings.budget;
  const at::Device device = model.options().device();
  policy.reset();
  policy.prepare(model, prompt, settings, stop);
  KvCache cache(model.config(), 1, model.options(), policy.needs().last_layer_input);
  GenerationResult result;
  result.prompt = prompt;
  auto record_refresh = [&](const char* phase, int64_t step, int64_t processed) {
    RefreshRecord record = refresh(model, cache, policy, budget);
    record.phase = phase;
    record.step = step;
    record.processed = processed;
    result.refreshes.push_back(std::move(record));
  };

  // Prefill, shared by all rollouts.
  auto start = Clock::now();
  const at::Tensor prompt_ids = at::tensor(prompt, at::kLong).unsqueeze(0).to(device);
  const int64_t chunk = budget.mode == CacheBudget::Mode::Chunked ? budget.h : P;
  at::Tensor logits;
  for (int64_t begin = 0, index = 0; begin < P; begin += chunk, ++index) {
    const int64_t length = std::min(chunk, P - begin);
    logits = step(model, cache, policy, prompt_ids.narrow(1, begin, length),
                  at::arange(begin, begin + length, at::kLong).unsqueeze(0).to(device));
    result.peak_cache_size = std::max(result.peak_cache_size, cache.size());
    if (policy.evicts() && cache.size() > budget.J + budget.frozen) record_refresh("prefill", index, begin + length);
  }

  // Decode.
  if (settings.rollouts > 1) {
    cache.expand_batch(settings.rollouts);
    policy.expand_batch(settings.rollouts);
    logits = logits.expand({settings.rollouts, logits.size(1), logits.size(2)});
  }
  Rollouts rollouts(settings, stop);
  rollouts.choose(logits);  // reading the first token waits for the device: prefill time = time to first token
  result.prefill_seconds = seconds_since(start);
  start = Clock::now();
  double cache_size_sum = 0.0;
  int64_t decode_steps = 0;
  for (int64_t s = 1; rollouts.any_active(); ++s) {
    const at::Tensor position = at::full({settings.rollouts, 1}, P + s - 1, at::kLong).to(device);
    logits = step(model, cache, policy, rollouts.last_tokens(device), position);
    cache_size_sum += static_cast<double>(cache.size());
    ++decode_steps;
    result.peak_cache_size = std::max(result.peak_cache_size, cache.size());
    if (policy.evicts() && (P + s) % budget.h == 0) record_refresh("decode", s, P + s);
    rollouts.choose(logits);  // from the logits computed before the refresh
  }
  result.decode_seconds = seconds_since(start);
  result.mean_cache_size = decode_steps ? cache_size_sum / decode_steps : static_cast<double>(cache.size());
  result.rollouts = rollouts.take();
  return result;
}

}  // namespace kvbench
