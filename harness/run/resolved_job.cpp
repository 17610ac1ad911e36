#include "run/resolved_job.h"

#include <algorithm>
#include <cmath>
#include <regex>

#include "common/error.h"
#include "run/job_fields.h"

namespace kvbench {

namespace {

// Sizes from a config are bounded before anything is allocated or run: a typo (J = 10^12, 10^9 rollouts)
// gets a message, not an out-of-memory kill or a run that never ends.
constexpr int64_t kMaxTokens = int64_t{1} << 24;  // 16.7 M: past any model's context
constexpr int64_t kMaxRollouts = 4096;

void check_range(const char* field, int64_t value, int64_t low, int64_t high) {
  if (value < low || value > high) fail("{} must be in {}..{} (got {})", field, low, high, value);
}

void check_bounds(const JobConfig& job) {
  check_range("J", job.budget.J.token_count(), 0, kMaxTokens);
  check_range("h", job.budget.h, 0, kMaxTokens);
  check_range("recent", job.budget.recent, -1, kMaxTokens);
  check_range("min_gap", job.budget.min_gap, 0, kMaxTokens);
  check_range("sinks", job.budget.sinks, 0, kMaxTokens);
  validate(job.phrase);
  check_range("smooth", job.phrase.smooth, 1, kMaxTokens);
  check_range("keep_span", job.phrase.keep_span, 1, kMaxTokens);
  check_range("max_new", job.max_new, 0, kMaxTokens);  // 0: each sample's own (the task's defaults give 0)
  check_range("rollouts", job.rollouts, 1, kMaxRollouts);
  if (!std::isfinite(job.temperature) || job.temperature > 100)
    fail("temperature must be in 0..100 (got {})", job.temperature);
  if (!(job.top_p >= 0 && job.top_p <= 1)) fail("top_p must be in 0..1 (got {})", job.top_p);
}

// A generated task's spec may stand for its name: --task ruler:vt,length=8192 is --task ruler --data
// ruler:vt,length=8192 (under the datasets root, where its files are looked for).
void split_task_spec(JobConfig& job, const std::filesystem::path& data_root) {
  const auto colon = job.task.find(':');
  if (colon == std::string::npos) return;
  if (!job.data.empty()) fail("--task {} names its data already: leave --data out", job.task);
  job.data = (data_root / job.task).string();
  job.task.resize(colon);
  if (tasks::make_task(job.task)->reads_dataset())
    fail("task {} reads a dataset file: pass it with --data, not as --task {}:…", job.task, job.task);
}

}  // namespace

ResolvedJob::ResolvedJob(JobConfig config, Profile profile, std::shared_ptr<const tasks::Task> task)
    : JobConfig(std::move(config)),
      profile_(profile),
      task_(std::move(task)),
      policy_spec_(kvbench::policy_spec(*this, profile)),
      label_(job_label(*this)) {}

std::unique_ptr<Policy> ResolvedJob::make_policy() const { return kvbench::make_policy(policy_spec_); }

ResolvedJob resolve_job(JobConfig job, const std::filesystem::path& data_root) {
  split_task_spec(job, data_root);
  const Profile profile = parse_profile(job.profile);
  std::shared_ptr<const tasks::Task> task = tasks::make_task(job.task, task_protocol(profile));
  // Unknown names and knobs fail here, before a model loads; specs take their normal form.
  job = with_normal_specs(std::move(job));
  // A sweep's base may name a scorer for a grid of policies: only kvpop reads it, so the others drop it.
  if (!make_policy(job.policy)->knob_settings().contains("scorer")) job.scorer.clear();
  check_choices(job);
  if (job.compress_questions && job.pipeline != "kvpress") fail("compress_questions is a setting of --pipeline kvpress");
  if (job.data.empty()) job.data = (data_root / task->default_dataset()).string();
  const tasks::DecodingDefaults defaults = task->defaults(job.data);
  if (job.max_new <= 0) job.max_new = defaults.max_new_tokens;
  if (job.temperature < 0) job.temperature = defaults.temperature;
  if (job.top_p < 0) job.top_p = defaults.top_p;
  if (job.rollouts <= 0) job.rollouts = defaults.rollouts;
  // h = J/4 by default, written out so the results file and its name say what ran.
  if (job.budget.h == 0 && job.budget.J.token_count() > 0) job.budget.h = default_h(job.budget.J.token_count());
  if (job.limit < 0) fail("limit must not be negative (got {})", job.limit);
  check_bounds(job);
  return ResolvedJob(std::move(job), profile, std::move(task));
}

std::string job_label(const ResolvedJob& j, const std::vector<std::string>& extra_fields) {
  const std::string task = j.benchmark().label(j.data);
  std::string label = fmt::format("{}__{}__{}__{}__h{}__s{}__r{}", model_label(j.model), task, j.policy,
                                  j.budget.J.label(), j.budget.h, j.seed, j.rollouts);
  const json fields = to_json(j);
  std::vector<std::string> named;
  for (const std::string& field : extra_fields) {  // an old field (a sweep's pyramid_ratio axis): its holder's value
    const std::string own = field_holding(field);
    if (std::find(named.begin(), named.end(), own) == named.end()) named.push_back(own);
  }
  const json defaults = to_json(JobConfig{});
  for (const std::string field : {"smooth", "keep_span", "shadow", "profile"})
    if (fields.at(field) != defaults.at(field) && std::find(named.begin(), named.end(), field) == named.end())
      named.push_back(field);
  for (const std::string& field : named) {
    if (!fields.contains(field)) continue;  // an allocator field of a uniform job: absent, as before allocators
    const json& value = fields.at(field);
    label += "__" + field + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return std::regex_replace(label, std::regex("[^A-Za-z0-9_.+=-]"), "-");
}

int64_t sample_max_new(const ResolvedJob& job, const tasks::Sample& sample) {
  return job.max_new > 0 ? job.max_new : job.benchmark().max_new_tokens(sample);
}

GenerationSettings generation_settings(const JobConfig& job, Profile profile, const Policy& policy,
                                       int64_t system_tokens, const Tokenizer* tokenizer, int64_t prompt_tokens) {
  GenerationSettings settings;
  settings.reference = reference_quirks(profile);
  settings.budget = resolve_budget(job.budget, policy, system_tokens, prompt_tokens);
  settings.phrase = job.phrase;
  settings.sampling = {job.temperature, job.top_p, /*top_k=*/0, job.seed};
  settings.max_new_tokens = job.max_new;
  settings.rollouts = job.rollouts;
  if (tokenizer) settings.eos_ids = end_ids(profile, *tokenizer);
  settings.tokenizer = tokenizer;
  settings.chat = job.prompt_mode == "chat";
  settings.shadow_full = job.shadow == "full";
  return settings;
}

GenerationSettings generation_settings(const ResolvedJob& job, const Policy& policy, int64_t system_tokens,
                                       const Tokenizer* tokenizer, int64_t prompt_tokens) {
  return generation_settings(job, job.profile_kind(), policy, system_tokens, tokenizer, prompt_tokens);
}

}  // namespace kvbench
