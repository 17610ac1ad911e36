#include "run/profile.h"

#include <algorithm>

#include "common/error.h"

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
bool runs_counter_causal(const JobConfig& job) { return job.policy.rfind("counter-causal", 0) == 0; }
bool h2o(const JobConfig& job) { return job.policy == "h2o"; }
bool any(const JobConfig&) { return true; }
bool evicting_chunked(const JobConfig& job) { return job.policy != "full" && job.budget.mode == "chunked"; }
bool math500(const JobConfig& job) { return job.task == "math500"; }
bool auto_frozen(const JobConfig& job) { return job.budget.frozen == "auto"; }
}  // namespace

const std::vector<ProfileBehaviour>& profile_behaviours() {
  static const std::vector<ProfileBehaviour> rows = {
      {"h2o's accumulator at a refresh point within budget", "adds (its hook runs at every point)",
       "adds: it is how the paper's H2O proxy is defined", nullptr},
      {"decode refreshes after --mode prefill_end", "none: one refresh after the prompt",
       "none: the paper's code, and kvpress's one-shot compression", nullptr},
      {"the paper tasks' layouts and scores (longhealth, qasper-paper, locomo-paper)", "tasks.py",
       "tasks.py: conventions, followed as written", nullptr},
      {"token id of a decode step's entry (counter-causal passes embed and score it)",
       "the token predicted from it (a bug)", "the entry's own token", runs_counter_causal},
      {"Qwen3's q_norm on counter-causal queries", "left out (a bug)", "applied, as the causal pass does", runs_counter_causal},
      {"h2o's accumulator across samples",
       "carried into the next sample when its body is at least as long (one hook per dataset); samples one at a "
       "time, in order",
       "fresh per sample: results independent of sample order, batching and resume", h2o},
      {"tokens that end a generation", "the tokenizer's eos_token only",
       "also generation_config's eos ids (an instruct model's end of turn), as HF generate stops", any},
      {"the first generated token", "never checked against eos or the stop rule", "checked like every other", any},
      {"a prompt of one chunk (P ≤ h, chunked)", "no refresh before decoding",
       "refreshed when over J + frozen: the budget holds from the first step", evicting_chunked},
      {"math500 answer and verdict", "the last \\boxed{…} (None when unclosed), math-verify's verdict",
       "kvbench's extraction and grader (tests/peers/README.md: 6 documented classes differ)", math500},
      {"math500 stop rule", "the last \\boxed{ is closed", "a complete \\boxed{…} exists", math500},
      {"--frozen auto",
       "token length of the task's system text with its \"\\n\\n\", the same for every sample (locomo: empty "
       "speaker names)",
       "each sample's own system text", auto_frozen},
  };
  return rows;
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

void apply_profile(Profile profile, PolicyOptions& options) {
  const bool on = profile == Profile::Reference;
  options.h2o_leak_across_samples = on;
  options.queries_without_q_norm = on;
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
