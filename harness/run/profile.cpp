#include "run/profile.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/error.h"
#include "common/spec.h"

namespace kvbench {

namespace {
const std::vector<std::string> kNames = {"kvbench", "reference"};
}  // namespace

Profile parse_profile(const std::string& name) {
  if (name == kNames[0]) return Profile::Kvbench;
  if (name == kNames[1]) return Profile::Reference;
  fail("profile must be kvbench or reference (got \"{}\")", name);
}

std::vector<std::string> profile_names() { return kNames; }

namespace {
std::string policy_name(const JobConfig& job) { return parse_spec(job.policy, "policy").name; }
bool runs_counter_causal(const JobConfig& job) { return policy_name(job).rfind("counter-causal", 0) == 0; }
bool any(const JobConfig&) { return true; }
bool evicting_chunked(const JobConfig& job) { return job.policy != "full" && job.budget.mode == "chunked"; }
bool math500(const JobConfig& job) { return job.task == "math500"; }
bool auto_frozen(const JobConfig& job) { return job.budget.frozen == "auto"; }

// A row whose difference is knobs: it concerns the jobs of the policies it presets.
ProfileBehaviour knob_row(std::string behaviour, std::string reference, std::string kvbench,
                          std::vector<KnobPreset> knobs) {
  auto differs = [knobs](const JobConfig& job) {
    return std::any_of(knobs.begin(), knobs.end(), [&](const KnobPreset& k) { return k.policy == policy_name(job); });
  };
  return {std::move(behaviour), std::move(reference), std::move(kvbench), differs, std::move(knobs), ""};
}
}  // namespace

const std::vector<ProfileBehaviour>& profile_behaviours() {
  static const std::vector<ProfileBehaviour> rows = {
      {"h2o's accumulator at a refresh point within budget", "adds (its hook runs at every point)",
       "adds: it is how the paper's H2O proxy is defined", nullptr, {}, "—"},
      {"decode refreshes after --mode prefill_end", "none: one refresh after the prompt",
       "none: the paper's code, and kvpress's one-shot compression", nullptr, {}, "—"},
      {"the paper tasks' layouts and scores (longhealth, qasper-paper, locomo-paper)", "tasks.py",
       "tasks.py: conventions, followed as written", nullptr, {}, "—"},
      {"token id of a decode step's entry (counter-causal passes embed and score it)",
       "the token predicted from it (a bug)", "the entry's own token", runs_counter_causal, {},
       "engine: reference.predicted_ids"},
      knob_row("Qwen3's q_norm on counter-causal queries", "left out (a bug)", "applied, as the causal pass does",
               {{"counter-causal", "q_norm", "false"}, {"counter-causal-fast", "q_norm", "false"}}),
      knob_row("h2o's accumulator across samples",
               "carried into the next sample when its body is at least as long (one hook per dataset); samples one "
               "at a time, in order",
               "fresh per sample: results independent of sample order, batching and resume",
               {{"h2o", "carry", "true"}}),
      {"tokens that end a generation", "the tokenizer's eos_token only",
       "also generation_config's eos ids (an instruct model's end of turn), as HF generate stops", any, {},
       "end tokens: eos_token"},
      {"the first generated token", "never checked against eos or the stop rule", "checked like every other", any,
       {}, "engine: reference.first_token_unchecked"},
      {"a prompt of one chunk (P ≤ h, chunked)", "no refresh before decoding",
       "refreshed when over J + frozen: the budget holds from the first step", evicting_chunked, {},
       "engine: reference.lone_chunk_unrefreshed"},
      {"math500 answer and verdict", "the last \\boxed{…} (None when unclosed), math-verify's verdict",
       "kvbench's extraction and grader (tests/peers/README.md: 6 documented classes differ)", math500, {},
       "task protocol: reference"},
      {"math500 stop rule", "the last \\boxed{ is closed", "a complete \\boxed{…} exists", math500, {},
       "task protocol: reference"},
      {"--frozen auto",
       "token length of the task's system text with its \"\\n\\n\", the same for every sample (locomo: empty "
       "speaker names)",
       "each sample's own system text", auto_frozen, {}, "task protocol: reference"},
  };
  return rows;
}

std::vector<KnobPreset> knob_presets(Profile profile) {
  std::vector<KnobPreset> presets;
  if (profile != Profile::Reference) return presets;
  for (const ProfileBehaviour& row : profile_behaviours()) presets.insert(presets.end(), row.knobs.begin(), row.knobs.end());
  return presets;
}

std::string preset_text(const ProfileBehaviour& row) {
  if (row.knobs.empty()) return row.setting;
  std::vector<std::string> knobs;
  for (const KnobPreset& k : row.knobs) knobs.push_back(fmt::format("`{}:{}={}`", k.policy, k.knob, k.value));
  return fmt::format("{}", fmt::join(knobs, ", "));
}

std::vector<std::string> differences_from_paper(const JobConfig& job) {
  static const std::vector<std::string> paper_tasks = tasks::reference_protocol_task_names();
  std::vector<std::string> differences;
  if (parse_profile(job.profile) != Profile::Kvbench) return differences;
  if (std::find(paper_tasks.begin(), paper_tasks.end(), job.task) == paper_tasks.end()) return differences;
  for (const ProfileBehaviour& row : profile_behaviours())
    if (row.differs_for && row.differs_for(job)) differences.push_back(row.behaviour);
  return differences;
}

ReferenceQuirks reference_quirks(Profile profile) {
  const bool on = profile == Profile::Reference;
  return {/*predicted_ids=*/on, /*first_token_unchecked=*/on, /*lone_chunk_unrefreshed=*/on};
}

std::vector<int64_t> end_ids(Profile profile, const Tokenizer& tokenizer) {
  if (profile == Profile::Kvbench) return tokenizer.eos_ids();
  const std::optional<int64_t> eos = tokenizer.eos_token_id();
  return eos ? std::vector<int64_t>{*eos} : std::vector<int64_t>{};
}

tasks::Protocol task_protocol(Profile profile) {
  return profile == Profile::Reference ? tasks::Protocol::Reference : tasks::Protocol::Kvbench;
}

}  // namespace kvbench
