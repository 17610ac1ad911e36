#include "run/job.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>

#include "common/error.h"
#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/generate.h"
#include "run/profile.h"
#include "tasks/task.h"

namespace kvbench {

int64_t default_h(int64_t J) { return std::max<int64_t>(J / 4, 1); }

namespace {
constexpr int64_t kRatioExamplePrompt = 1000;
}  // namespace

void set_budget_J(BudgetSpec& spec, const std::string& text) {
  const std::string prefix = "ratio:";
  try {
    std::size_t used = 0;
    if (text.rfind(prefix, 0) == 0) {
      const double ratio = std::stod(text.substr(prefix.size()), &used);
      if (used == text.size() - prefix.size() && ratio > 0 && ratio < 1) {
        spec.J = 0;
        spec.ratio = ratio;
        return;
      }
    } else {
      const int64_t J = std::stoll(text, &used);
      if (used == text.size() && J >= 0) {
        spec.J = J;
        spec.ratio = 0;
        return;
      }
    }
  } catch (const std::exception&) {
  }
  fail("--J must be a token count or ratio:R, a compression ratio with 0 < R < 1 (got \"{}\")", text);
}

int64_t budget_J(const BudgetSpec& spec, int64_t prompt_tokens) {
  if (spec.ratio <= 0) return spec.J;
  return std::max<int64_t>(1, static_cast<int64_t>(std::floor(prompt_tokens * (1 - spec.ratio))));
}

std::string budget_label(const BudgetSpec& spec) {
  return spec.ratio > 0 ? fmt::format("ratio{}", knob_text(spec.ratio)) : fmt::format("J{}", spec.J);
}

CacheBudget resolve_budget(const BudgetSpec& spec, const Policy& policy, int64_t auto_frozen_tokens,
                           int64_t prompt_tokens) {
  CacheBudget b;
  const int64_t J = budget_J(spec, prompt_tokens);
  b.J = J;
  if (spec.frozen == "auto") {
    b.frozen = auto_frozen_tokens;
    b.J -= auto_frozen_tokens;  // the reference's auto_frozen counts the system prompt against J
  } else {
    try {
      size_t used = 0;
      b.frozen = std::stoll(spec.frozen, &used);
      if (used != spec.frozen.size()) throw std::invalid_argument(spec.frozen);
    } catch (const std::exception&) {
      fail("frozen must be a token count or `auto` (got \"{}\")", spec.frozen);
    }
  }
  if (policy.evicts() && J <= 0)
    fail("policy {} needs a cache budget: pass --J N (N > 0) or --J ratio:R", policy.name());
  if (spec.h < 0) fail("h must be positive (got {})", spec.h);
  // Without a budget (full) nothing is refreshed, so the prompt is prefilled in one pass.
  b.h = spec.h > 0 ? spec.h : (J > 0 ? default_h(J) : std::numeric_limits<int32_t>::max());
  b.recent = spec.recent >= 0 ? spec.recent : policy.default_recent(b.J);
  b.min_gap = spec.min_gap;
  b.sinks = spec.sinks;
  if (spec.mode != "chunked" && spec.mode != "prefill_end")
    fail("mode must be chunked or prefill_end (got \"{}\")", spec.mode);
  b.mode = spec.mode == "chunked" ? CacheBudget::Mode::Chunked : CacheBudget::Mode::PrefillEnd;
  b.allocator = spec.allocator;
  b.ragged = find_allocator(spec.allocator).ragged();
  return b;
}

std::string with_pyramid_ratio(const std::string& allocator, double ratio) {
  const Spec parsed = parse_spec(allocator, "allocator");
  if (parsed.name != "pyramid" || parsed.items.text("ratio")) return allocator;
  return fmt::format("{}{}ratio={}", allocator, parsed.items.items().empty() ? ":" : ",", knob_text(ratio));
}

PolicyOptions policy_options(const JobConfig& job) {
  PolicyOptions options;
  options.seed = job.policy_seed;
  options.scorer_path = job.scorer;
  apply_profile(parse_profile(job.profile), options);
  return options;
}

GenerationSettings generation_settings(const JobConfig& job, const Policy& policy, int64_t system_tokens,
                                       const Tokenizer* tokenizer, int64_t prompt_tokens) {
  const Profile profile = parse_profile(job.profile);
  GenerationSettings settings;
  settings.reference = reference_quirks(profile);
  settings.budget = resolve_budget(job.budget, policy, system_tokens, prompt_tokens);
  settings.phrase = job.phrase;
  settings.sampling = {job.temperature, job.top_p, /*top_k=*/0, job.seed};
  settings.max_new_tokens = job.max_new;
  settings.rollouts = job.rollouts;
  if (tokenizer) settings.eos_ids = end_ids(profile, *tokenizer);
  settings.shadow_full = job.shadow == "full";
  return settings;
}

json to_json(const JobConfig& j) {
  json out = {{"model", j.model},         {"task", j.task},
          {"data", j.data},           {"prompt_mode", j.prompt_mode},
          {"policy", j.policy},       {"J", j.budget.J},
          {"h", j.budget.h},          {"recent", j.budget.recent},
          {"frozen", j.budget.frozen}, {"min_gap", j.budget.min_gap},
          {"sinks", j.budget.sinks},  {"mode", j.budget.mode},
          {"policy_seed", j.policy_seed}, {"scorer", j.scorer},
          {"smooth", j.phrase.smooth}, {"keep_span", j.phrase.keep_span},
          {"max_new", j.max_new},
          {"temperature", j.temperature}, {"top_p", j.top_p},
          {"rollouts", j.rollouts},   {"seed", j.seed},
          {"limit", j.limit},         {"samples", j.samples},
          {"device", j.device},       {"dtype", j.dtype},
          {"shadow", j.shadow},       {"profile", j.profile}};
  // Only when not uniform: every job from before allocators keeps its identity, file name and resume key.
  if (j.budget.allocator != BudgetSpec{}.allocator) out["allocator"] = j.budget.allocator;
  if (!j.tokenizer.empty()) out["tokenizer"] = j.tokenizer;  // likewise: only when not the model's own
  if (j.budget.ratio > 0) out["ratio"] = j.budget.ratio;      // and only for ratio budgets
  return out;
}

JobConfig job_from_json(const json& value, const std::string& where) {
  if (!value.is_object()) fail("{}: expected a JSON object of job fields", where);
  JobConfig j;
  json known = to_json(j);
  known["allocator"] = j.budget.allocator;
  known["tokenizer"] = j.tokenizer;
  known["ratio"] = j.budget.ratio;
  known["pyramid_ratio"] = 2.0;  // an alias of the allocator's knob (with_pyramid_ratio)
  for (const auto& [key, field] : value.items()) {
    if (!known.contains(key)) fail("{}: unknown field \"{}\" (known: {})", where, key, known.dump());
    // Numbers may be written as integers where doubles are expected, but not the other way round.
    const bool same_kind = field.type() == known[key].type() ||
                           (field.is_number() && known[key].is_number_float()) ||
                           (field.is_number_unsigned() && known[key].is_number_integer()) ||
                           (field.is_number_integer() && known[key].is_number_unsigned() && field.get<int64_t>() >= 0);
    if (!same_kind) fail("{}: field \"{}\" should be like {} (got {})", where, key, known[key].dump(), field.dump());
  }
  json merged = known;
  merged.update(value);
  merged.at("model").get_to(j.model);
  merged.at("tokenizer").get_to(j.tokenizer);
  merged.at("task").get_to(j.task);
  merged.at("data").get_to(j.data);
  merged.at("prompt_mode").get_to(j.prompt_mode);
  merged.at("policy").get_to(j.policy);
  merged.at("J").get_to(j.budget.J);
  merged.at("ratio").get_to(j.budget.ratio);
  merged.at("h").get_to(j.budget.h);
  merged.at("recent").get_to(j.budget.recent);
  merged.at("frozen").get_to(j.budget.frozen);
  merged.at("min_gap").get_to(j.budget.min_gap);
  merged.at("sinks").get_to(j.budget.sinks);
  merged.at("mode").get_to(j.budget.mode);
  merged.at("allocator").get_to(j.budget.allocator);
  if (value.contains("pyramid_ratio"))
    j.budget.allocator = with_pyramid_ratio(j.budget.allocator, value.at("pyramid_ratio").get<double>());
  merged.at("policy_seed").get_to(j.policy_seed);
  merged.at("scorer").get_to(j.scorer);
  merged.at("smooth").get_to(j.phrase.smooth);
  merged.at("keep_span").get_to(j.phrase.keep_span);
  merged.at("max_new").get_to(j.max_new);
  merged.at("temperature").get_to(j.temperature);
  merged.at("top_p").get_to(j.top_p);
  merged.at("rollouts").get_to(j.rollouts);
  merged.at("seed").get_to(j.seed);
  merged.at("limit").get_to(j.limit);
  merged.at("samples").get_to(j.samples);
  merged.at("device").get_to(j.device);
  merged.at("dtype").get_to(j.dtype);
  merged.at("shadow").get_to(j.shadow);
  merged.at("profile").get_to(j.profile);
  return j;
}

JobConfig with_normal_specs(JobConfig job) {
  job.policy = make_policy(job.policy)->spec();
  job.budget.allocator = find_allocator(job.budget.allocator).spec();
  return job;
}

json effective_settings(const JobConfig& job, const Policy& policy, int64_t system_tokens) {
  // A ratio budget's J (and h, recent by default) differ per sample: shown for a prompt of 1000 tokens.
  const CacheBudget b = resolve_budget(job.budget, policy, system_tokens, kRatioExamplePrompt);
  const Allocator& allocator = find_allocator(b.allocator);
  const KeepRule rule = policy.keep_rule(b);  // what the policy protects of the budget's recent and sinks
  json budget = {{"J", b.J}, {"h", b.h}, {"recent", rule.recent}, {"frozen", b.frozen}, {"min_gap", b.min_gap},
                 {"sinks", rule.sinks}};
  if (job.budget.ratio > 0) budget["ratio"] = {{"ratio", job.budget.ratio}, {"prompt_tokens", kRatioExamplePrompt}};
  return {{"policy", {{"name", policy.name()}, {"knobs", policy.knob_settings()}}},
          {"allocator", {{"name", allocator.name()}, {"knobs", allocator.knob_settings()}}},
          {"budget", budget}};
}

json current_form(const json& recorded) {
  try {
    return to_json(with_normal_specs(job_from_json(recorded, "recorded config")));
  } catch (const Error&) {
    return recorded;
  }
}

std::string model_label(const std::string& model) {
  const std::filesystem::path path(model);
  const std::string name = path.extension() == ".gguf" ? path.stem().string() : path.filename().string();
  return name.empty() ? model : name;
}

std::string job_label(const JobConfig& j, const std::vector<std::string>& extra_fields) {
  const std::string task = tasks::make_task(j.task)->label(j.data);
  std::string label = fmt::format("{}__{}__{}__{}__h{}__s{}__r{}", model_label(j.model), task, j.policy,
                                  budget_label(j.budget), j.budget.h, j.seed, j.rollouts);
  const json fields = to_json(j);
  std::vector<std::string> named;
  for (const std::string& field : extra_fields) {  // the alias's value lives in the allocator's spec
    const std::string own = field == "pyramid_ratio" ? "allocator" : field;
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

}  // namespace kvbench
