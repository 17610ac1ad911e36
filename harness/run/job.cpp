#include "run/job.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "common/error.h"
#include "common/spec.h"
#include "engine/allocator.h"
#include "engine/generate.h"
#include "run/job_fields.h"
#include "run/profile.h"

namespace kvbench {

int64_t default_h(int64_t J) { return std::max<int64_t>(J / 4, 1); }

namespace {
constexpr int64_t kRatioExamplePrompt = 1000;
}  // namespace

BudgetJ BudgetJ::tokens(int64_t J) {
  if (J < 0) fail("J must be a token count, 0 or more (got {})", J);
  BudgetJ budget;
  budget.tokens_ = J;
  return budget;
}

BudgetJ BudgetJ::ratio(double R) {
  if (!(R > 0 && R < 1)) fail("ratio must be a compression ratio with 0 < R < 1 (got {})", R);
  BudgetJ budget;
  budget.ratio_ = R;
  return budget;
}

BudgetJ BudgetJ::parse(const std::string& text) {
  const std::string prefix = "ratio:";
  try {
    std::size_t used = 0;
    if (text.rfind(prefix, 0) == 0) {
      const double R = std::stod(text.substr(prefix.size()), &used);
      if (used == text.size() - prefix.size() && R > 0 && R < 1) return ratio(R);
    } else {
      const int64_t J = std::stoll(text, &used);
      if (used == text.size() && J >= 0) return tokens(J);
    }
  } catch (const std::exception&) {
  }
  fail("J must be a token count or ratio:R, a compression ratio with 0 < R < 1 (got \"{}\")", text);
}

int64_t BudgetJ::for_prompt(int64_t prompt_tokens) const {
  if (!is_ratio()) return tokens_;
  return std::max<int64_t>(1, static_cast<int64_t>(std::floor(prompt_tokens * (1 - ratio_))));
}

std::string BudgetJ::text() const { return is_ratio() ? "ratio:" + knob_text(ratio_) : std::to_string(tokens_); }

std::string BudgetJ::label() const {
  return is_ratio() ? fmt::format("ratio{}", knob_text(ratio_)) : fmt::format("J{}", tokens_);
}

std::string BudgetJ::table_text() const {
  if (is_ratio()) return fmt::format("ratio={}", ratio_);
  return tokens_ > 0 ? fmt::format("J={}", tokens_) : "no budget";
}

bool BudgetJ::operator<(const BudgetJ& other) const {
  return std::pair{ratio_, tokens_} < std::pair{other.ratio_, other.tokens_};
}

CacheBudget resolve_budget(const BudgetSpec& spec, const Policy& policy, int64_t auto_frozen_tokens,
                           int64_t prompt_tokens) {
  CacheBudget b;
  const int64_t J = spec.J.for_prompt(prompt_tokens);
  b.J = J;
  b.ratio = spec.J.compression_ratio();
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
  const Allocator& allocator = find_allocator(spec.allocator);
  b.own_budget = allocator.own_budget();
  if (b.own_budget && spec.J.is_set())
    fail("allocator {} keeps by a rule of its own, not J: drop --J ({})", allocator.name(), spec.J.text());
  if (policy.evicts() && J <= 0 && !b.own_budget)
    fail("policy {} needs a cache budget: pass --J N (N > 0) or --J ratio:R", policy.name());
  if (spec.h < 0) fail("h must be positive (got {})", spec.h);
  if (b.own_budget && spec.mode == "chunked" && spec.h == 0)
    fail("allocator {} keeps by a rule of its own, with no J to take h from: give --mode prefill_end (one refresh, at "
         "the prompt's end) or --h (--mode chunked: a refresh every h tokens)", allocator.name());
  // Without a budget (full) nothing is refreshed, so the prompt is prefilled in one pass.
  b.h = spec.h > 0 ? spec.h : (J > 0 ? default_h(J) : std::numeric_limits<int32_t>::max());
  b.recent = spec.recent >= 0 ? spec.recent : policy.default_recent(b.J);
  b.min_gap = spec.min_gap;
  b.sinks = spec.sinks;
  if (spec.mode != "chunked" && spec.mode != "prefill_end")
    fail("mode must be chunked or prefill_end (got \"{}\")", spec.mode);
  b.mode = spec.mode == "chunked" ? CacheBudget::Mode::Chunked : CacheBudget::Mode::PrefillEnd;
  b.allocator = spec.allocator;
  b.ragged = allocator.ragged();
  b.rerotate = spec.rerotate_keys;
  return b;
}

namespace {

// Job fields that hold a policy's knob: files from before it was a knob keep their identity.
const std::pair<const char*, const char*> kKnobFields[] = {{"policy_seed", "seed"}, {"scorer", "scorer"}};

using Items = std::vector<std::pair<std::string, std::string>>;

bool gives(const Items& items, const std::string& knob) {
  return std::any_of(items.begin(), items.end(), [&](const auto& item) { return item.first == knob; });
}

std::string spec_text(const std::string& name, const Items& items) {
  std::vector<std::string> written;
  for (const auto& [key, value] : items) written.push_back(key + "=" + value);
  return written.empty() ? name : fmt::format("{}:{}", name, fmt::join(written, ","));
}

// The knobs `profile` presets on the policy `name`.
std::map<std::string, std::string> presets_of(const std::string& name, Profile profile) {
  std::map<std::string, std::string> presets;
  for (const KnobPreset& preset : knob_presets(profile))
    if (preset.policy == name) presets[preset.knob] = preset.value;
  return presets;
}

}  // namespace

std::string policy_spec(const JobConfig& job, Profile profile) {
  const Spec spec = parse_spec(job.policy, "policy");
  Items items = spec.items.items();
  const json reads = make_policy(spec.name)->knob_settings();  // the knobs it reads, at their defaults
  for (const auto& [field_name, knob] : kKnobFields) {
    const JobField& field = job_field(field_name);
    if (!reads.contains(knob) || field.get(job) == field.default_value()) continue;
    const std::string value = knob_text(field.get(job));
    if (const auto given = spec.items.text(knob); given && *given != value)
      fail("policy {}: {} is given twice, {} as the knob and {} as the job field {}", job.policy, knob, *given, value,
           field_name);
    if (!gives(items, knob)) items.emplace_back(knob, value);
  }
  for (const auto& [knob, value] : presets_of(spec.name, profile))
    if (reads.contains(knob) && !gives(items, knob)) items.emplace_back(knob, value);
  return spec_text(spec.name, items);
}

JobConfig with_normal_specs(JobConfig job) {
  const Profile profile = parse_profile(job.profile);
  const auto policy = make_policy(policy_spec(job, profile));
  const Spec made = parse_spec(policy->spec(), "policy");  // knobs off the factory's defaults, in reading order
  const auto presets = presets_of(made.name, profile);
  Items normal;
  for (const auto& [knob, value] : made.items.items()) {
    const auto preset = presets.find(knob);
    if (preset == presets.end() || preset->second != value) normal.emplace_back(knob, value);
  }
  for (const auto& [knob, preset] : presets)  // a knob set back to the factory's default over the profile's
    if (const std::string value = knob_text(policy->knob_settings().at(knob)); !gives(normal, knob) && value != preset)
      normal.emplace_back(knob, value);
  for (const auto& [field_name, knob] : kKnobFields)
    if (gives(normal, knob)) {
      job_field(field_name).set(policy->knob_settings().at(knob), job);
      normal.erase(std::find_if(normal.begin(), normal.end(), [&](const auto& item) { return item.first == knob; }));
    }
  job.policy = spec_text(made.name, normal);
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
  if (job.budget.J.is_ratio())
    budget["ratio"] = {{"ratio", job.budget.J.compression_ratio()}, {"prompt_tokens", kRatioExamplePrompt}};
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

std::string tokenizer_source(const JobConfig& job) { return job.tokenizer.empty() ? job.model : job.tokenizer; }

std::string model_label(const std::string& model) {
  const std::filesystem::path path(model);
  const std::string name = path.extension() == ".gguf" ? path.stem().string() : path.filename().string();
  return name.empty() ? model : name;
}

}  // namespace kvbench
