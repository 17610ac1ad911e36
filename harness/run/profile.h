// Profiles: where kvbench and the counter-causal paper's own code (hooks.py, tasks.py, evaluate.py; MIT,
// kept outside the project as a test oracle) part ways, one name picks a side for every behaviour at once.
//   kvbench    (default) the paper's conventions where they are only conventions (H2O accumulating at
//              every refresh point, no decode refresh after a prefill_end refresh, the paper tasks' layouts
//              and scores), kvbench's own behaviour where the paper's code is wrong or narrower
//   reference  the paper's code token for token, its bugs included: what reproduces its tables
// A profile is a preset: of policy knobs (h2o:carry, counter-causal:q_norm, set unless the spec gives them)
// and of settings (the engine's quirks, the end tokens, the tasks' protocol). Each row of
// profile_behaviours() is one difference and names its knobs or setting; the README's table is printed from
// it (`kvbench list profiles`), so the code and the table cannot drift apart.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/generate.h"
#include "run/job.h"
#include "tasks/task.h"
#include "tokenizer/tokenizer.h"

namespace kvbench {

enum class Profile { Kvbench, Reference };

// Throws kvbench::Error naming the known profiles.
Profile parse_profile(const std::string& name);
std::vector<std::string> profile_names();

// A knob a profile sets on a policy unless the policy's spec gives it: under `reference`, h2o:carry=true.
struct KnobPreset {
  std::string policy, knob, value;
};

struct ProfileBehaviour {
  std::string behaviour;  // what may differ
  std::string reference;  // what the paper's code does
  std::string kvbench;    // kvbench's default, and why
  // The jobs whose results the difference can change; none where kvbench's default follows the paper's code.
  std::function<bool(const JobConfig&)> differs_for;
  // How `reference` sets it: knobs of policies (knob_presets) or the setting it switches.
  std::vector<KnobPreset> knobs;
  std::string setting;
};
const std::vector<ProfileBehaviour>& profile_behaviours();

// The behaviours in which `job` would run otherwise under the other profile (none for a job the paper's code
// does not run: its tasks are math500, longhealth, qasper-paper and locomo-paper).
std::vector<std::string> differences_from_paper(const JobConfig& job);

// The profile's side of each switch: the policies' knobs, the engine's (GenerationSettings::reference),
// the end of a generation, the tasks' (tasks::Protocol).
std::vector<KnobPreset> knob_presets(Profile profile);
// What `kvbench list profiles` shows of a row: its knob presets ("h2o:carry=true") or its setting.
std::string preset_text(const ProfileBehaviour& row);
ReferenceQuirks reference_quirks(Profile profile);
// The tokens that end a generation.
std::vector<int64_t> end_ids(Profile profile, const Tokenizer& tokenizer);
tasks::Protocol task_protocol(Profile profile);

}  // namespace kvbench
