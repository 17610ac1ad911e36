#include "run/cost.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <random>

#include "engine/generate.h"
#include "run/recipe.h"
#include "run/runner.h"
#include "tasks/task.h"

namespace kvbench {

namespace {
constexpr int64_t kBenchNewTokens = 8;
constexpr int64_t kUnbudgetedPrompt = 512;

std::vector<int64_t> random_tokens(int64_t count, int64_t vocab) {
  std::mt19937_64 rng(count);
  std::uniform_int_distribution<int64_t> token(3, vocab - 1);
  std::vector<int64_t> ids(count);
  for (auto& id : ids) id = token(rng);
  return ids;
}

// Jobs with one key run the same prompts: tokenizing them (the slow part) once serves them all.
std::string prompts_key(const JobConfig& job) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", job.model, job.tokenizer, job.task, job.data, job.prompt_mode,
                     job.profile, job.limit, fmt::join(job.samples, ","));
}
}  // namespace

std::vector<SampleSize> sample_sizes(const ResolvedJob& job, const Tokenizer& tokenizer) {
  std::vector<SampleSize> sizes;
  for (const auto& sample : job_samples(job, tokenizer))
    sizes.push_back({static_cast<int64_t>(encode_prompt(job.benchmark().prompt(sample), tokenizer, job).ids.size()),
                     job.benchmark().max_new_tokens(sample)});
  return sizes;
}

Workload job_workload(const ResolvedJob& job, const std::vector<SampleSize>& samples) {
  Workload w;
  const bool evicts = job.make_policy()->evicts();
  for (const SampleSize& sample : samples) {
    const int64_t max_new = job.max_new > 0 ? job.max_new : sample.own_max_new;
    ++w.samples;
    w.prompt_tokens += sample.prompt;
    w.new_tokens += job.rollouts * max_new;
    if (evicts && job.budget.h > 0) w.refreshes += (sample.prompt + max_new) / job.budget.h;
  }
  return w;
}

Speed measure_speed(const Model& model, const ResolvedJob& job) {
  // A scorer not trained yet costs about what the untrained fallback does.
  JobConfig untrained = job;
  if (!std::filesystem::exists(untrained.scorer)) untrained.scorer.clear();
  const std::string spec = policy_spec(untrained, job.profile_kind());
  auto policy = [&] { return make_policy(spec); };
  // The job's budget and phrase; one greedy rollout of a fixed length, no shadow run, time nothing else.
  GenerationSettings settings = generation_settings(job, *policy(), 0, nullptr, kUnbudgetedPrompt);
  settings.sampling = {};
  settings.rollouts = 1;
  settings.shadow_full = false;
  settings.max_new_tokens = kBenchNewTokens;
  // J + h tokens in chunks of h: exactly one refresh, at n = J + h, after the last chunk. One run, no
  // warm-up: the estimate is for hours of work, a first-call overhead does not move it.
  const int64_t prompt_length = job.budget.J.token_count() > 0 ? settings.budget.J + settings.budget.h : kUnbudgetedPrompt;
  const auto prompt = random_tokens(prompt_length, model.config().vocab_size);
  const GenerationResult result = generate(model, *policy(), prompt, settings);
  Speed speed;
  speed.prefill_tokens_per_s = prompt_length / result.prefill_seconds;
  speed.decode_tokens_per_s = (result.rollouts[0].generated.size() - 1) / std::max(result.decode_seconds, 1e-9);
  double total = 0.0;
  for (const auto& record : result.refreshes) total += record.scoring_ms;
  if (!result.refreshes.empty()) speed.refresh_ms = total / result.refreshes.size();
  return speed;
}

double estimated_seconds(const Workload& w, const Speed& s) {
  return w.prompt_tokens / s.prefill_tokens_per_s + w.new_tokens / s.decode_tokens_per_s +
         w.refreshes * s.refresh_ms / 1000.0;
}

std::string speed_key(const JobConfig& job) {
  return fmt::format("{}|{}|{}|{}|{}|{}", job.model, job.device, job.dtype, job.policy, job.budget.J.text(), job.budget.h);
}

bool workload_countable(const ResolvedJob& job) {
  return Tokenizer::available(tokenizer_source(job)) && missing_data_files(job).empty();
}

std::vector<JobCost> job_costs(const std::vector<SweepJob>& jobs, const std::map<std::string, Speed>& speeds) {
  std::map<std::string, std::vector<SampleSize>> sizes;
  std::map<std::string, Tokenizer> tokenizers;
  std::vector<JobCost> costs;
  for (const auto& entry : jobs) {
    JobCost cost;
    const ResolvedJob& job = entry.job;
    if (workload_countable(job)) {
      const std::string source = tokenizer_source(job);
      if (!tokenizers.count(source)) tokenizers.emplace(source, Tokenizer::load(source));
      if (!sizes.count(prompts_key(job))) sizes[prompts_key(job)] = sample_sizes(job, tokenizers.at(source));
      cost.workload = job_workload(job, sizes.at(prompts_key(job)));
    }
    const auto speed = speeds.find(speed_key(job));
    if (speed != speeds.end()) cost.speed = speed->second;
    costs.push_back(cost);
  }
  return costs;
}

}  // namespace kvbench
