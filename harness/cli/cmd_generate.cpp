// `kvbench generate`: one prompt through the cache-managed generator, with any policy.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/error.h"

namespace kvbench::cli {

namespace {

struct GenerateOptions {
  JobCliOptions job;
  std::string prompt, prompt_ids, system;
  bool chat = false, no_thinking = false;
  int64_t top_k = 0;
  std::vector<std::string> stop;
  std::string format = "text";
};

std::vector<int64_t> parse_ids(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    try {
      size_t used = 0;
      ids.push_back(std::stoll(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      fail("--prompt-ids: \"{}\" is not an integer (expected e.g. 1,403,407)", item);
    }
  }
  return ids;
}

void run_generate(const GenerateOptions& o) {
  if (o.prompt.empty() == o.prompt_ids.empty()) fail("give exactly one of --prompt or --prompt-ids");
  if (o.job.job.budget.frozen == "auto" && o.system.empty()) fail("--frozen auto needs --system (the text it freezes)");
  api::GenerateRequest request;
  request.prompt = {o.prompt, o.prompt_ids.empty() ? std::vector<int64_t>() : parse_ids(o.prompt_ids), o.system,
                    o.chat, !o.no_thinking};
  request.job = o.job.job;
  request.top_k = o.top_k;
  request.stop = o.stop;
  const api::Generation generation = api::generate(api::load_model(o.job.model_source()), request);

  if (o.format == "json") {
    std::cout << api::generation_json(generation).dump() << "\n";
    return;
  }
  const GenerationResult& result = generation.result;
  for (size_t r = 0; r < result.rollouts.size(); ++r)
    std::cout << (generation.texts[r].empty() ? fmt::format("{}", fmt::join(result.rollouts[r].generated, " "))
                                              : generation.texts[r])
              << "\n";
  spdlog::info("{} prompt tokens, {} generated ({}), {} refreshes, mean cache {:.1f}, peak {}", result.prompt.size(),
               result.rollouts[0].generated.size(), result.rollouts[0].stop_reason, result.refreshes.size(),
               result.mean_cache_size, result.peak_cache_size);
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate",
      fmt::format("Generate from one prompt with a cache-eviction policy.\nPolicies: {}.\nExample: kvbench generate "
                  "--model ../shared/models/stories260K --prompt \"Once upon a time\" --policy counter-causal --J 32",
                  fmt::join(policy_names(), ", ")));
  options->job.add_model(cmd);
  options->job.add_policy(cmd);
  cmd->add_option("--prompt", options->prompt, "Prompt text (raw: tokenized as is, BOS per the tokenizer)");
  cmd->add_option("--prompt-ids", options->prompt_ids, "Prompt as comma-separated token ids, e.g. 1,403,407");
  cmd->add_option("--system", options->system, "System prompt (raw mode: prepended with a blank line)");
  cmd->add_flag("--chat", options->chat, "Render system + prompt with the tokenizer's chat template");
  cmd->add_flag("--no-thinking", options->no_thinking, "Chat: Qwen3 enable_thinking=false");
  options->job.add_decoding(cmd, "256 new tokens, greedy, top-p 1, 1 rollout");
  cmd->add_option("--top-k", options->top_k, "Top-k sampling (0 = off)")->capture_default_str();
  cmd->add_option("--stop", options->stop, "Stop string (repeatable)");
  options->job.add(cmd, "shadow", false)->description(
                  "full: also decode with a full cache, teacher-forced with the generated tokens; json gains "
                  "shadow_kl (KL(full || policy) per chosen token) and shadow_top1 (argmax agreement), and per "
                  "refresh shadow_lost_by_layer (the full cache's attention on entries the policy lacked, per token "
                  "fed until the next refresh × layer; see `kvbench run --help`), rollout 0");
  cmd->add_option("--format", options->format, "text or json")->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([options] { run_generate(*options); });
}

}  // namespace kvbench::cli
