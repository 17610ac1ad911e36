#include "cli/options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "api/registries.h"
#include "common/gguf_file.h"

namespace kvbench::cli {

namespace {
// Fails at parse time, before any work, with how to get a checkpoint (a bare HF id is a common slip).
std::string existing_model(const std::string& model) {
  if (model.rfind("random:", 0) == 0 || std::filesystem::is_directory(model) || is_gguf_file(model)) return "";
  return fmt::format("model {} does not exist. Download an HF checkpoint first, e.g.\n"
                     "  huggingface-cli download Qwen/Qwen2.5-7B-Instruct --local-dir models/Qwen2.5-7B-Instruct\n"
                     "then pass --model models/Qwen2.5-7B-Instruct; or a .gguf file; `kvbench models list` shows the "
                     "models kvbench fetches itself (--model random:PRESET: random weights)",
                     model);
}

// Each registered allocator, what it does, its knobs and the policies it serves.
std::string allocator_help() {
  std::string help = "How J is spread over layers and KV heads: an allocator, with knobs as a policy's "
                     "(pyramid:ratio=3, ada:safeguard=0.2).";
  for (const api::AllocatorInfo& allocator : api::allocators())
    help += fmt::format(" {}: {} ({}{}).", allocator.name, allocator.summary,
                        allocator.serves_every_policy ? "every policy" : fmt::format("{}", fmt::join(allocator.policies, ", ")),
                        allocator.knobs.empty() ? "" : "; knobs " + allocator.knobs.dump());
  return help + " A ragged allocator's cache holds fewer entries where the budget is smaller";
}

std::string profile_help() {
  std::string help =
      "kvbench (default) or reference: the counter-causal paper's own code token for token, its bugs included "
      "(what reproduces its tables; the recipes of that paper use it). They differ in:";
  for (const api::ProfileRow& row : api::profile_rows())
    if (row.differs) help += fmt::format("\n  {}: reference {}; kvbench {}", row.behaviour, row.reference, row.kvbench);
  return help;
}
}  // namespace

void ModelOptions::add_to(CLI::App* command) {
  command->add_option("--model", model, "HF model directory (config.json + safetensors), a GGUF file (or a directory holding one), or random:PRESET")
      ->required()
      ->check(CLI::Validator(existing_model, "PATH"));
  command->add_option("--device", device, "cpu, cuda or cuda:N")->capture_default_str();
  command->add_option("--dtype", dtype, "Weights/activations: float32, bfloat16, float16 (default: float32 on "
                                        "CPU, bfloat16 on CUDA; softmax and scores are float32 regardless)");
}

at::Device ModelOptions::parsed_device() const { return source().parsed_device(); }

at::ScalarType ModelOptions::parsed_dtype() const { return source().parsed_dtype(); }

Model ModelOptions::load() const { return api::load_model(source()).model; }

void PolicyCliOptions::add_to(CLI::App* command) {
  command->add_option("--policy", policy, "Eviction policy (see `kvbench generate --help` for the list)")
      ->capture_default_str();
  command->add_option("--J", J,
                      "Cache budget J: entries kept by a refresh (besides the frozen prefix); or ratio:R, a compression "
                      "ratio as kvpress states budgets: each sample keeps J = max(1, floor(prompt tokens x (1 - R))), "
                      "0 < R < 1 (with --mode prefill_end: kvpress's one compression of the prompt)");
  command->add_option("--h", h, "Refresh interval and prefill chunk size (default J/4)");
  command->add_option("--recent", recent, "Recent window always kept (default 0; h2o: J/2)");
  command->add_option("--frozen", frozen,
                      "Frozen prefix that never leaves: a token count, or `auto` = the system prompt's token "
                      "length, then subtracted from J")
      ->capture_default_str();
  command->add_option("--min-gap", min_gap, "Counter-causal mask: entry i attends to slots j > i + min_gap")
      ->capture_default_str();
  command->add_option("--sinks", sinks, "Attention sinks: the first entries always kept (streaming, kvpop, expected-attention)")->capture_default_str();
  command->add_option("--mode", mode, "chunked: refresh after every prefill chunk; prefill_end: one refresh after "
                                      "the whole prompt")
      ->check(CLI::IsMember({"chunked", "prefill_end"}))
      ->capture_default_str();
  command->add_option("--allocator", allocator, allocator_help())
      ->check(CLI::Validator(api::allocator_spec_error, "SPEC"))
      ->capture_default_str();
  command->add_option("--pyramid-ratio", pyramid_ratio,
                      "Alias of pyramid:ratio=R: the first layer's budget / the last's (>= 1; 1 = uniform sizes). E.g. "
                      "J=64, 8 layers, ratio 3: budgets 96 87 78 69 59 50 41 32");
  command->add_option("--smooth", smooth,
                      "Phrase-level scores: before ranking, each candidate's score becomes the mean over a centred "
                      "window of W candidates in cache order (W odd; truncated at the ends of the candidates; frozen, "
                      "sinks and recent entries neither change nor enter a window). 1 = off. Any scorer, per-head "
                      "scores along the entry axis; no effect on policies that keep by position (full, sliding, "
                      "streaming)")
      ->capture_default_str();
  command->add_option("--keep-span", keep_span,
                      "Keep spans: walking the candidates from best to worst score (smoothed if --smooth), each is "
                      "kept with its S-1 followers in cache order; entries already kept are not counted twice and the "
                      "walk stops when the budget J is full, so the last span may be cut short and exactly as many "
                      "entries are kept as with S = 1. 1 = off")
      ->capture_default_str();
  command->add_option("--profile", profile, profile_help())
      ->check(CLI::IsMember(api::profile_names()))
      ->capture_default_str();
  command->add_option("--policy-seed", seed, "Seed of the random policy")->capture_default_str();
  command->add_option("--scorer", scorer, "kvpop: learned scorer from `kvbench train-scorer` (default: the "
                                          "untrained attention-mass fallback)");
}

void DecodingCliOptions::add_to(CLI::App* command, const std::string& unset) {
  command->add_option("--max-new", max_new, fmt::format("Maximum new tokens (unset: {})", unset));
  command->add_option("--temperature", temperature, fmt::format("0 = greedy (unset: {})", unset));
  command->add_option("--top-p", top_p, fmt::format("Nucleus sampling mass (unset: {})", unset));
  command->add_option("--rollouts", rollouts,
                      fmt::format("Rollouts per prompt, decoded as one batch from one prefill; pass@1 = mean over them "
                                  "(unset: {})",
                                  unset));
  command->add_option("--seed", seed, "Sampling seed (rollout r draws from its own stream)")->capture_default_str();
}

void DecodingCliOptions::apply(JobConfig& job) const {
  job.max_new = max_new;
  job.temperature = temperature;
  job.top_p = top_p;
  job.rollouts = rollouts;
  job.seed = seed;
}

BudgetSpec PolicyCliOptions::spec() const {
  BudgetSpec spec;
  set_budget_J(spec, J);
  spec.h = h;
  spec.recent = recent;
  spec.frozen = frozen;
  spec.min_gap = min_gap;
  spec.sinks = sinks;
  spec.mode = mode;
  spec.allocator = pyramid_ratio ? with_pyramid_ratio(allocator, *pyramid_ratio) : allocator;
  return spec;
}

JobConfig PolicyCliOptions::job() const {
  JobConfig job;
  job.policy = policy;
  job.budget = spec();
  job.phrase = phrase();
  job.policy_seed = seed;
  job.scorer = scorer;
  job.profile = profile;
  return job;
}

}  // namespace kvbench::cli
