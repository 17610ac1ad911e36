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
  std::string help = job_field("allocator").help + ".";
  for (const api::AllocatorInfo& allocator : api::allocators())
    help += fmt::format(" {}: {} ({}{}).", allocator.name, allocator.summary,
                        allocator.serves_every_policy ? "every policy" : fmt::format("{}", fmt::join(allocator.policies, ", ")),
                        allocator.knobs.empty() ? "" : "; knobs " + allocator.knobs.dump());
  return help + " A ragged allocator's cache holds fewer entries where the budget is smaller";
}

std::string profile_help() {
  std::string help = job_field("profile").help + ". They differ in:";
  for (const api::ProfileRow& row : api::profile_rows())
    if (row.differs) help += fmt::format("\n  {}: reference {}; kvbench {}", row.behaviour, row.reference, row.kvbench);
  return help;
}
}  // namespace

void ModelOptions::add_to(CLI::App* command) {
  command->add_option("--model", model, job_field("model").help)
      ->required()
      ->check(CLI::Validator(existing_model, "PATH"));
  command->add_option("--device", device, job_field("device").help)->capture_default_str();
  command->add_option("--dtype", dtype, job_field("dtype").help);
}

at::Device ModelOptions::parsed_device() const { return source().parsed_device(); }

at::ScalarType ModelOptions::parsed_dtype() const { return source().parsed_dtype(); }

Model ModelOptions::load() const { return api::load_model(source()).model; }

void PolicyCliOptions::add_to(CLI::App* command) {
  command->add_option("--policy", policy, job_field("policy").help)->capture_default_str();
  // --J takes both budget fields: J, or ratio:R for ratio.
  command->add_option("--J", J, fmt::format("{}; or ratio:R, {}", job_field("J").help, job_field("ratio").help));
  command->add_option("--h", h, job_field("h").help);
  command->add_option("--recent", recent, job_field("recent").help);
  command->add_option("--frozen", frozen, job_field("frozen").help)->capture_default_str();
  command->add_option("--min-gap", min_gap, job_field("min_gap").help)->capture_default_str();
  command->add_option("--sinks", sinks, job_field("sinks").help)->capture_default_str();
  command->add_option("--mode", mode, job_field("mode").help)
      ->check(CLI::IsMember({"chunked", "prefill_end"}))
      ->capture_default_str();
  command->add_option("--allocator", allocator, allocator_help())
      ->check(CLI::Validator(api::allocator_spec_error, "SPEC"))
      ->capture_default_str();
  command->add_option("--smooth", smooth, job_field("smooth").help)->capture_default_str();
  command->add_option("--keep-span", keep_span, job_field("keep_span").help)->capture_default_str();
  command->add_option("--profile", profile, profile_help())
      ->check(CLI::IsMember(api::profile_names()))
      ->capture_default_str();
  command->add_option("--policy-seed", seed, job_field("policy_seed").help)->capture_default_str();
  command->add_option("--scorer", scorer, job_field("scorer").help);
}

void DecodingCliOptions::add_to(CLI::App* command, const std::string& unset) {
  const auto help = [&](const std::string& field) {
    return fmt::format("{} (unset: {})", job_field(field).help, unset);
  };
  command->add_option("--max-new", max_new, help("max_new"));
  command->add_option("--temperature", temperature, help("temperature"));
  command->add_option("--top-p", top_p, help("top_p"));
  command->add_option("--rollouts", rollouts, help("rollouts"));
  command->add_option("--seed", seed, job_field("seed").help)->capture_default_str();
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
  spec.allocator = allocator;
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
