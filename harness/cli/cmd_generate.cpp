// `kvbench generate`: one prompt through the cache-managed generator, with any policy.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/json_file.h"
#include "engine/allocator.h"
#include "tokenizer/tokenizer.h"

namespace kvbench::cli {

namespace {

struct GenerateOptions {
  ModelOptions model;
  PolicyCliOptions policy;
  std::string prompt, prompt_ids, system;
  bool chat = false, no_thinking = false;
  int64_t max_new = 256;
  double temperature = 0.0, top_p = 1.0;
  int64_t top_k = 0, rollouts = 1;
  uint64_t seed = 0;
  std::vector<std::string> stop;
  std::string format = "text";
  std::string shadow;
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

struct PreparedPrompt {
  std::vector<int64_t> ids;
  int64_t system_tokens = 0;  // length of the prefix that `--frozen auto` freezes
};

PreparedPrompt prepare_prompt(const GenerateOptions& o, const Tokenizer* tokenizer) {
  if (!o.prompt_ids.empty()) return {parse_ids(o.prompt_ids), 0};
  if (!tokenizer) fail("--prompt needs a tokenizer.json in the model directory (or use --prompt-ids)");
  if (o.chat) {
    Conversation conversation;
    if (!o.system.empty()) conversation.push_back({"system", o.system});
    const int64_t system_tokens =
        o.system.empty() ? 0
                         : static_cast<int64_t>(
                               tokenizer->encode(tokenizer->apply_chat_template(conversation, false), false).size());
    conversation.push_back({"user", o.prompt});
    const std::string text = tokenizer->apply_chat_template(conversation, true, !o.no_thinking);
    return {tokenizer->encode(text, false), system_tokens};
  }
  // Raw mode, as the reference: the system text (if any), a blank line, then the prompt.
  const std::string system = o.system.empty() ? "" : o.system + "\n\n";
  return {tokenizer->encode(system + o.prompt, true),
          system.empty() ? 0 : static_cast<int64_t>(tokenizer->encode(o.system, true).size())};
}

json ids_json(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return json(std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()));
}

json nested_json(const at::Tensor& t) {  // any-rank tensor → nested lists (rollout 0)
  if (t.dim() == 1) {
    if (t.scalar_type() == at::kLong) return ids_json(t);
    const at::Tensor c = t.to(at::kFloat).contiguous();
    return json(std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel()));
  }
  json out = json::array();
  for (int64_t i = 0; i < t.size(0); ++i) out.push_back(nested_json(t[i]));
  return out;
}

json refresh_json(const RefreshRecord& r) {
  return {{"phase", r.phase},
          {"step", r.step},
          {"processed", r.processed},
          {"size_before", r.size_before},
          {"size_after", r.size_after},
          {"positions_before", nested_json(r.positions_before[0])},
          {"kept_positions", nested_json(r.kept_positions[0])},
          {"scores", r.scores.defined() ? nested_json(r.scores[0]) : json(nullptr)},
          {"candidates", {r.candidates_begin, r.candidates_end}},
          {"scoring_ms", r.scoring_ms},
          {"compaction_ms", r.compaction_ms}};
}

void run_generate(const GenerateOptions& o) {
  if (o.prompt.empty() == o.prompt_ids.empty()) fail("give exactly one of --prompt or --prompt-ids");
  const bool has_tokenizer = std::filesystem::exists(std::filesystem::path(o.model.model) / "tokenizer.json");
  std::optional<Tokenizer> tokenizer;
  if (has_tokenizer) tokenizer = Tokenizer::load(o.model.model);
  const PreparedPrompt prompt = prepare_prompt(o, tokenizer ? &*tokenizer : nullptr);
  JobConfig job = o.policy.job();
  job.temperature = o.temperature;
  job.top_p = o.top_p;
  job.seed = o.seed;
  job.max_new = o.max_new;
  job.rollouts = o.rollouts;
  job.shadow = o.shadow;
  auto policy = make_policy(job.policy, policy_options(job));
  if (o.policy.frozen == "auto" && o.system.empty()) fail("--frozen auto needs --system (the text it freezes)");

  GenerationSettings settings =
      generation_settings(job, *policy, prompt.system_tokens, tokenizer ? &*tokenizer : nullptr);
  settings.sampling.top_k = o.top_k;  // a knob of generate alone, not a job field
  StopCheck stop;
  if (!o.stop.empty()) {
    if (!tokenizer) fail("--stop needs a tokenizer.json in the model directory");
    stop = [&](int64_t, const std::vector<int64_t>& generated) {
      const std::string text = tokenizer->decode(generated);
      for (const auto& s : o.stop)
        if (text.find(s) != std::string::npos) return true;
      return false;
    };
  }
  const Model model = o.model.load();
  const GenerationResult result = generate(model, *policy, prompt.ids, settings, stop);

  auto text_of = [&](const RolloutResult& r) { return tokenizer ? tokenizer->decode(r.generated) : std::string(); };
  if (o.format == "json") {
    json out = {{"prompt_ids", result.prompt},
                {"generated_ids", result.rollouts[0].generated},
                {"text", text_of(result.rollouts[0])},
                {"stop_reason", result.rollouts[0].stop_reason},
                {"policy", policy->name()},
                {"J", settings.budget.J},
                {"h", settings.budget.h},
                {"recent", settings.budget.recent},
                {"frozen", settings.budget.frozen},
                {"smooth", settings.phrase.smooth},
                {"keep_span", settings.phrase.keep_span},
                {"mean_cache_size", result.mean_cache_size},
                {"peak_cache_size", result.peak_cache_size},
                {"allocator", settings.budget.allocator},
                {"mean_entries_per_head", result.mean_entries_per_head},
                {"peak_cache_bytes", result.peak_cache_bytes},
                {"prefill_seconds", result.prefill_seconds},
                {"decode_seconds", result.decode_seconds},
                {"refreshes", json::array()}};
    for (size_t i = 0; i < result.refreshes.size(); ++i) {
      out["refreshes"].push_back(refresh_json(result.refreshes[i]));
      if (!result.lost_attention.empty()) {  // rollout 0's window: queries × layers (engine/shadow.h)
        out["refreshes"].back()["shadow_lost_layers"] = result.lost_attention[i].layers;
        out["refreshes"].back()["shadow_lost_by_layer"] = result.lost_attention[i].by_rollout[0];
      }
    }
    if (!result.fidelity.empty()) {
      out["shadow_kl"] = result.fidelity[0].kl;
      out["shadow_top1"] = result.fidelity[0].top1_agree;
    }
    if (o.rollouts > 1) {
      out["rollouts"] = json::array();
      for (const auto& r : result.rollouts)
        out["rollouts"].push_back({{"generated_ids", r.generated}, {"text", text_of(r)}, {"stop_reason", r.stop_reason}});
    }
    std::cout << out.dump() << "\n";
    return;
  }
  for (const auto& r : result.rollouts)
    std::cout << (tokenizer ? text_of(r) : fmt::format("{}", fmt::join(r.generated, " "))) << "\n";
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
  options->model.add_to(cmd);
  options->policy.add_to(cmd);
  cmd->add_option("--prompt", options->prompt, "Prompt text (raw: tokenized as is, BOS per the tokenizer)");
  cmd->add_option("--prompt-ids", options->prompt_ids, "Prompt as comma-separated token ids, e.g. 1,403,407");
  cmd->add_option("--system", options->system, "System prompt (raw mode: prepended with a blank line)");
  cmd->add_flag("--chat", options->chat, "Render system + prompt with the tokenizer's chat template");
  cmd->add_flag("--no-thinking", options->no_thinking, "Chat: Qwen3 enable_thinking=false");
  cmd->add_option("--max-new", options->max_new, "Maximum new tokens")->capture_default_str();
  cmd->add_option("--temperature", options->temperature, "0 = greedy")->capture_default_str();
  cmd->add_option("--top-p", options->top_p, "Nucleus sampling mass")->capture_default_str();
  cmd->add_option("--top-k", options->top_k, "Top-k sampling (0 = off)")->capture_default_str();
  cmd->add_option("--seed", options->seed, "Sampling seed (rollout r uses its own stream)")->capture_default_str();
  cmd->add_option("--rollouts", options->rollouts, "Sequences decoded together from one prefill")->capture_default_str();
  cmd->add_option("--stop", options->stop, "Stop string (repeatable)");
  cmd->add_option("--shadow", options->shadow,
                  "full: also decode with a full cache, teacher-forced with the generated tokens; json gains "
                  "shadow_kl (KL(full || policy) per chosen token) and shadow_top1 (argmax agreement), and per "
                  "refresh shadow_lost_by_layer (the full cache's attention on entries the policy lacked, per token "
                  "fed until the next refresh × layer; see `kvbench run --help`), rollout 0")
      ->check(CLI::IsMember({"full"}));
  cmd->add_option("--format", options->format, "text or json")->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([options] { run_generate(*options); });
}

}  // namespace kvbench::cli
