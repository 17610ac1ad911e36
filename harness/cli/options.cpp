#include "cli/options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <type_traits>

#include "api/registries.h"
#include "common/error.h"
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

// An option of `f`'s type that writes the given value into `job` as the JSON reader would; a value the
// field refuses is the option's error.
template <class Value>
CLI::Option* value_option(CLI::App* command, const JobField& f, JobConfig& job, const std::string& help) {
  return command->add_option_function<Value>(
      f.option_name(),
      [&f, &job](const Value& value) {
        try {
          if constexpr (std::is_same_v<Value, std::string>)
            if (f.set_text) return f.set_text(value, job);
          f.set(json(value), job);
        } catch (const Error& e) {
          throw CLI::ValidationError(f.option_name(), e.what());
        }
      },
      help);
}

CLI::Option* field_option(CLI::App* command, const JobField& f, JobConfig& job, const std::string& help) {
  if (!f.has_option) fail("job field \"{}\" has no option of its own", f.name);
  const json like = f.default_value();
  CLI::Option* option = nullptr;
  if (f.set_text || like.is_string()) option = value_option<std::string>(command, f, job, help);
  else if (like.is_boolean()) option = value_option<bool>(command, f, job, help);
  else if (like.is_number_unsigned()) option = value_option<uint64_t>(command, f, job, help);
  else if (like.is_number_integer()) option = value_option<int64_t>(command, f, job, help);
  else if (like.is_number_float()) option = value_option<double>(command, f, job, help);
  else if (like.is_array()) option = value_option<std::vector<std::string>>(command, f, job, help)->delimiter(',');
  else fail("job field \"{}\": no option for values like {}", f.name, like.dump());
  if (!f.choices.empty()) option->check(CLI::IsMember(f.choices));
  return option;
}

}  // namespace

CLI::Option* JobCliOptions::add(CLI::App* command, const std::string& name, bool show_default) {
  const JobField& f = job_field(name);
  CLI::Option* option = field_option(command, f, job, f.help);
  const json value = f.get(job);
  if (show_default) option->default_str(value.is_string() ? value.get<std::string>() : value.dump());
  return option;
}

CLI::Option* JobCliOptions::add_unset(CLI::App* command, const std::string& name, const std::string& unset) {
  const JobField& f = job_field(name);
  return field_option(command, f, job, fmt::format("{} (unset: {})", f.help, unset));
}

void JobCliOptions::add_model(CLI::App* command) {
  job.dtype.clear();  // the device's: float32 on CPU, bfloat16 on CUDA
  add(command, "model")->required()->check(CLI::Validator(existing_model, "PATH"));
  add(command, "device");
  add(command, "dtype", false);
}

void JobCliOptions::add_policy(CLI::App* command) {
  add(command, "policy");
  add(command, "J", false)->description(fmt::format("{}; or ratio:R, {}", job_field("J").help, job_field("ratio").help));
  for (const char* field : {"h", "recent"}) add(command, field, false);
  for (const char* field : {"frozen", "min_gap", "sinks", "mode"}) add(command, field);
  add(command, "allocator")->description(allocator_help())->check(CLI::Validator(api::allocator_spec_error, "SPEC"));
  add(command, "rerotate_keys");
  for (const char* field : {"smooth", "keep_span"}) add(command, field);
  add(command, "profile")->description(profile_help());
  add(command, "policy_seed");
  add(command, "scorer", false);
}

void JobCliOptions::add_decoding(CLI::App* command, const std::string& unset) {
  job.max_new = 0;
  job.rollouts = 0;
  job.temperature = -1.0;
  job.top_p = -1.0;
  for (const char* field : {"max_new", "temperature", "top_p", "rollouts"}) add_unset(command, field, unset);
  add(command, "seed");
}

}  // namespace kvbench::cli
