#include "run/job_fields.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "common/error.h"
#include "common/spec.h"
#include "run/profile.h"

namespace kvbench {

namespace {

using Written = JobField::Written;

// A field stored at `path` in JobConfig: a member (&JobConfig::seed) or a member's member (&JobConfig::budget,
// &BudgetSpec::J), which `(job .* ... .* path)` walks.
template <class... Path>
JobField field(const char* name, Written written, const char* help, Path... path) {
  return {name, written, help, [=](const JobConfig& job) { return json((job .* ... .* path)); },
          [=](const json& value, JobConfig& job) { value.get_to((job .* ... .* path)); }};
}

// A string field that takes one of `choices`.
JobField choosing(JobField f, std::vector<std::string> choices) {
  f.choices = std::move(choices);
  return f;
}

// A field of job files written by an older kvbench, read into the field that holds its value today and
// never written: old files and sweep configs still read as the same job.
struct OldField {
  const char* name;
  const char* held_by;  // today's field
  json like;            // a value of its type: the type check's model and its entry in the known fields
  void (*read_into)(const json& value, JobConfig& job);  // after today's fields are read
};

// The pyramid ratio of old job files as the knob of `allocator`: "pyramid" + 3 → "pyramid:ratio=3". A spec
// that names its own ratio keeps it, and other allocators ignore it, so a sweep's base may carry it over an
// allocator grid.
std::string with_pyramid_ratio(const std::string& allocator, double ratio) {
  const Spec parsed = parse_spec(allocator, "allocator");
  if (parsed.name != "pyramid" || parsed.items.text("ratio")) return allocator;
  return fmt::format("{}{}ratio={}", allocator, parsed.items.items().empty() ? ":" : ",", knob_text(ratio));
}

// "pyramid_ratio": pyramid's ratio from before allocators took knobs, now the knob of the allocator's spec:
// {"allocator": "pyramid", "pyramid_ratio": 3} is the job of "pyramid:ratio=3" (with_pyramid_ratio).
const OldField kOldFields[] = {{"pyramid_ratio", "allocator", 2.0, [](const json& value, JobConfig& job) {
                                  job.budget.allocator = with_pyramid_ratio(job.budget.allocator, value.get<double>());
                                }}};

// Every field the reader takes, each with the value its type check compares against.
json known_fields() {
  json known = json::object();
  for (const JobField& f : job_fields()) known[f.name] = f.default_value();
  for (const OldField& old : kOldFields) known[old.name] = old.like;
  return known;
}

// Numbers may be written as integers where doubles are expected, but not the other way round; unsigned fields
// take non-negative integers.
bool same_kind(const json& value, const json& like) {
  return value.type() == like.type() || (value.is_number() && like.is_number_float()) ||
         (value.is_number_unsigned() && like.is_number_integer()) ||
         (value.is_number_integer() && like.is_number_unsigned() && value.get<int64_t>() >= 0);
}

}  // namespace

std::string JobField::option_name() const {
  std::string option = "--" + name;
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}

bool JobField::written_for(const JobConfig& job) const {
  if (written == Written::unless_default) return get(job) != default_value();
  if (written == Written::when_positive) return get(job).get<double>() > 0;
  return true;
}

const std::vector<JobField>& job_fields() {
  using J = JobConfig;
  using B = BudgetSpec;
  static const std::vector<JobField> fields = {
      field("model", Written::always,
            "HF model directory (config.json + safetensors), a GGUF file (or a directory holding one), or "
            "random:PRESET",
            &J::model),
      // Only when not the model's own: jobs from before the field keep their identity.
      field("tokenizer", Written::unless_default,
            "Directory with tokenizer.json (or a .gguf file) when the model has none (random:PRESET): e.g. "
            "models/kvbench-demo; its ids must be below the model's vocabulary size",
            &J::tokenizer),
      field("task", Written::always, "Task", &J::task),
      field("data", Written::always,
            "Dataset path (or rare-fact spec); default: the task's dataset under --data-root", &J::data),
      choosing(field("prompt_mode", Written::always, "raw (the reference: no chat template) or chat", &J::prompt_mode),
               {"raw", "chat"}),
      // Only when not kvbench's: every job from before the field keeps its identity.
      choosing(field("pipeline", Written::unless_default,
                     "kvbench: the prompt is one sequence, every token a candidate for eviction; kvpress: "
                     "kvpress's pipeline (kvpress/pipeline.py) - the task's context is prefilled and compressed "
                     "(with a ratio budget, J from the context's length alone), then its question and answer "
                     "prefix are prefilled after the compression, never evicted by it; chat mode puts the context "
                     "in the user turn and the question after it, the answer prefix after the assistant header, "
                     "thinking off. With --mode prefill_end (one compression, none while decoding) it is kvpress's "
                     "own protocol. Tasks with a context and a question: ruler, niah, longhealth, qasper, locomo, "
                     "rare-fact",
                     &J::pipeline),
               {"kvbench", "kvpress"}),
      field("compress_questions", Written::unless_default,
            "With --pipeline kvpress: the question joins the compressed context, and only the turn's end and the "
            "answer prefix follow it (kvpress's compress_questions)",
            &J::compress_questions),
      field("policy", Written::always, "Eviction policy (see `kvbench generate --help` for the list)", &J::policy),
      // J's two forms: the token count here (0 for a ratio budget), the ratio in the next field.
      {"J", Written::always,
       "Cache budget J: entries kept by a refresh (besides the frozen prefix); none with an allocator that keeps by a "
       "rule of its own (dms's threshold, layers' ratios)",
       [](const JobConfig& job) { return json(job.budget.J.token_count()); },
       [](const json& value, JobConfig& job) {
         if (!job.budget.J.is_ratio()) job.budget.J = BudgetJ::tokens(value.get<int64_t>());
         else if (value.get<int64_t>() != 0) fail("give J or a ratio, not both");
       },
       {},
       [](const std::string& text, JobConfig& job) { job.budget.J = BudgetJ::parse(text); }},
      // Only for ratio budgets: jobs from before the field, and every J budget, keep their identity.
      {"ratio", Written::when_positive,
       "a compression ratio as kvpress states budgets: each sample keeps J = max(1, floor(prompt tokens x "
       "(1 - R))), 0 < R < 1 (with --mode prefill_end: kvpress's one compression of the prompt)",
       [](const JobConfig& job) { return json(job.budget.J.compression_ratio()); },
       [](const json& value, JobConfig& job) {
         if (value.get<double>() == 0) return;
         if (job.budget.J.token_count() != 0) fail("give J or a ratio, not both");
         job.budget.J = BudgetJ::ratio(value.get<double>());
       },
       {},
       {},
       /*has_option=*/false},
      field("h", Written::always, "Refresh interval and prefill chunk size (default J/4)", &J::budget, &B::h),
      field("recent", Written::always,
            "Recent window always kept (-1: the policy's own: 0; h2o, h2o-true J/2; kvpop, future-oracle J/4; snapkv "
            "its window)",
            &J::budget, &B::recent),
      field("frozen", Written::always,
            "Frozen prefix that never leaves: a token count, or `auto` = the system prompt's token length, then "
            "subtracted from J",
            &J::budget, &B::frozen),
      field("min_gap", Written::always, "Counter-causal mask: entry i attends to slots j > i + min_gap", &J::budget,
            &B::min_gap),
      field("sinks", Written::always,
            "Attention sinks: the first entries always kept (streaming, kvpop, expected-attention)", &J::budget,
            &B::sinks),
      choosing(field("mode", Written::always,
                     "chunked: refresh after every prefill chunk; prefill_end: one refresh after the whole prompt",
                     &J::budget, &B::mode),
               {"chunked", "prefill_end"}),
      // Only when not uniform: every job from before allocators keeps its identity, file name and resume key.
      field("allocator", Written::unless_default,
            "How J is spread over layers and KV heads, or what keeps in its place (dms, layers): an allocator, with "
            "knobs as a policy's (pyramid:ratio=3, ada:safeguard=0.2)",
            &J::budget, &B::allocator),
      field("rerotate_keys", Written::unless_default,
            "After the compression each layer and head's kept keys move to the positions 0, 1, ... in order, and the "
            "tokens after them follow at the next positions (kvpress's KeyRerotationPress around any policy; finch "
            "does it by itself). Needs --mode prefill_end and an allocator that keeps as many entries in every layer "
            "and head (uniform, chunk, critical)",
            &J::budget, &B::rerotate_keys),
      field("smooth", Written::always,
            "Phrase-level scores: before ranking, each candidate's score becomes the mean over a centred window of "
            "W candidates in cache order (W odd; truncated at the ends of the candidates; frozen, sinks and recent "
            "entries neither change nor enter a window). 1 = off. Any scorer, per-head scores along the entry axis; "
            "no effect on policies that keep by position (full, sliding, streaming)",
            &J::phrase, &PhraseRules::smooth),
      field("keep_span", Written::always,
            "Keep spans: walking the candidates from best to worst score (smoothed if --smooth), each is kept with "
            "its S-1 followers in cache order; entries already kept are not counted twice and the walk stops when "
            "the budget J is full, so the last span may be cut short and exactly as many entries are kept as with "
            "S = 1. 1 = off",
            &J::phrase, &PhraseRules::keep_span),
      field("policy_seed", Written::always, "Seed of the random policy", &J::policy_seed),
      field("scorer", Written::always,
            "kvpop: learned scorer from `kvbench train-scorer` (default: the untrained attention-mass fallback)",
            &J::scorer),
      field("max_new", Written::always, "Maximum new tokens (0 in a results file: each sample's own, a RULER file's rows)", &J::max_new),
      field("temperature", Written::always, "0 = greedy", &J::temperature),
      field("top_p", Written::always, "Nucleus sampling mass", &J::top_p),
      field("rollouts", Written::always,
            "Rollouts per prompt, decoded as one batch from one prefill; pass@1 = mean over them", &J::rollouts),
      field("seed", Written::always, "Sampling seed (rollout r draws from its own stream)", &J::seed),
      field("limit", Written::always, "Only the first N samples (0 = all)", &J::limit),
      field("samples", Written::always, "Only these sample ids", &J::samples),
      field("device", Written::always, "cpu, cuda or cuda:N", &J::device),
      field("dtype", Written::always,
            "Weights/activations: float32, bfloat16, float16 (default: float32 on CPU, bfloat16 on CUDA; softmax "
            "and scores are float32 regardless)",
            &J::dtype),
      choosing(field("shadow", Written::always,
            "full: also decode each sample with a full cache, teacher-forced with the policy's own tokens, and\n"
            "record per chosen token KL(full || policy) of the next-token distributions and whether the argmax\n"
            "tokens agree (results rows shadow_kl, shadow_top1; `kvbench report --table fidelity`); and per\n"
            "refresh the attention mass lost: for every token fed after the refresh until the next one (or\n"
            "the end), the full cache's attention probability on the entries the policy's cache lacked -\n"
            "evicted at that refresh or an earlier one - per layer, mean over query heads (refreshes\n"
            "shadow_lost_by_layer, their mean shadow_lost_mass; `kvbench report --table attention-loss`).\n"
            "Summed over refreshes this is the future attention (every later query) on each refresh's\n"
            "evicted entries, the quantity future-oracle minimises. Costs a second, full-cache decode that\n"
            "keeps every layer's attention probabilities of the tokens it feeds",
            &J::shadow),
               {"", "full"}),
      choosing(field("profile", Written::always,
            "kvbench (default) or reference: the counter-causal paper's own code token for token, its bugs included "
            "(what reproduces its tables; the recipes of that paper use it)",
            &J::profile),
               profile_names()),
  };
  return fields;
}

const JobField& job_field(const std::string& name) {
  for (const JobField& f : job_fields())
    if (f.name == name) return f;
  fail("no job field \"{}\"", name);
}

void check_choices(const JobConfig& job) {
  for (const JobField& f : job_fields()) {
    if (f.choices.empty()) continue;
    const std::string value = f.get(job).get<std::string>();
    if (std::find(f.choices.begin(), f.choices.end(), value) == f.choices.end())
      fail("{} must be one of {} (got \"{}\")", f.name, json(f.choices).dump(), value);
  }
}

std::string field_holding(const std::string& name) {
  for (const OldField& old : kOldFields)
    if (name == old.name) return old.held_by;
  return name;
}

json to_json(const JobConfig& job) {
  json out = json::object();
  for (const JobField& f : job_fields())
    if (f.written_for(job)) out[f.name] = f.get(job);
  return out;
}

JobConfig job_from_json(const json& value, const std::string& where) {
  if (!value.is_object()) fail("{}: expected a JSON object of job fields", where);
  const json known = known_fields();
  for (const auto& [key, given] : value.items()) {
    if (!known.contains(key)) fail("{}: unknown field \"{}\" (known: {})", where, key, known.dump());
    if (!same_kind(given, known[key]))
      fail("{}: field \"{}\" should be like {} (got {})", where, key, known[key].dump(), given.dump());
  }
  JobConfig job;
  for (const JobField& f : job_fields()) {
    if (!value.contains(f.name)) continue;
    try {
      f.set(value.at(f.name), job);
    } catch (const Error& e) {
      fail("{}: field \"{}\": {}", where, f.name, e.what());
    }
  }
  for (const OldField& old : kOldFields)
    if (value.contains(old.name)) old.read_into(value.at(old.name), job);
  return job;
}

}  // namespace kvbench
