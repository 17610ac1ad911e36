#include "api/kvbench.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "engine/allocator.h"
#include "model/random_model.h"
#include "report/niah.h"
#include "report/attention_loss.h"
#include "report/fidelity.h"
#include "report/overlap.h"

namespace kvbench::api {

at::Device ModelSource::parsed_device() const { return parse_device(device); }

at::ScalarType ModelSource::parsed_dtype() const {
  if (!dtype.empty()) return parse_dtype(dtype);
  return parsed_device().is_cuda() ? at::kBFloat16 : at::kFloat;
}

LoadedModel load_model(const ModelSource& source) {
  const std::string prefix = "random:";
  if (source.model.rfind(prefix, 0) == 0)
    return {random_model(random_model_config(source.model.substr(prefix.size())), 0, source.parsed_device(),
                         source.parsed_dtype()),
            std::nullopt};
  if (!std::filesystem::exists(source.model)) fail("model {} does not exist (a directory or a .gguf file)", source.model);
  std::optional<Tokenizer> tokenizer;
  if (Tokenizer::available(source.model)) tokenizer = Tokenizer::load(source.model);
  return {Model::load(source.model, source.parsed_device(), source.parsed_dtype()), std::move(tokenizer)};
}

LoadedModel load_job_model(const JobConfig& job) {
  const std::filesystem::path tokenizer = tokenizer_source(job);
  if (!Tokenizer::available(tokenizer))
    fail("{}: no tokenizer (tokenizer.json, or a GGUF's vocabulary) (runs decode and grade text, so the model needs "
         "its tokenizer; a random:PRESET model takes one with --tokenizer DIR)", tokenizer.string());
  LoadedModel loaded = load_model({job.model, job.device, job.dtype});
  if (!job.tokenizer.empty()) loaded.tokenizer = Tokenizer::load(job.tokenizer);
  return loaded;
}

void register_policy(const std::string& name, PolicyFactory factory) {
  kvbench::register_policy(name, std::move(factory));
}

namespace {

struct EncodedInput {
  std::vector<int64_t> ids;
  int64_t system_tokens = 0;  // what `frozen = auto` freezes
};

EncodedInput encode(const PromptInput& prompt, const Tokenizer* tokenizer) {
  if (prompt.text.empty()) {
    if (prompt.ids.empty()) fail("the prompt is empty: give its text or its token ids");
    return {prompt.ids, 0};
  }
  if (!tokenizer) fail("a prompt as text needs a tokenizer.json in the model directory (or give token ids)");
  if (prompt.chat) {
    Conversation conversation;
    if (!prompt.system.empty()) conversation.push_back({"system", prompt.system});
    const int64_t system_tokens =
        prompt.system.empty()
            ? 0
            : static_cast<int64_t>(tokenizer->encode(tokenizer->apply_chat_template(conversation, false), false).size());
    conversation.push_back({"user", prompt.text});
    return {tokenizer->encode(tokenizer->apply_chat_template(conversation, true, prompt.thinking), false),
            system_tokens};
  }
  // Raw mode, as the reference: the system text (if any), a blank line, then the prompt.
  const std::string system = prompt.system.empty() ? "" : prompt.system + "\n\n";
  return {tokenizer->encode(system + prompt.text, true),
          system.empty() ? 0 : static_cast<int64_t>(tokenizer->encode(prompt.system, true).size())};
}

StopCheck stop_strings(const std::vector<std::string>& stops, const Tokenizer* tokenizer) {
  if (stops.empty()) return {};
  if (!tokenizer) fail("stop strings need a tokenizer.json in the model directory");
  return [stops, tokenizer](int64_t, const std::vector<int64_t>& generated) {
    const std::string text = tokenizer->decode(generated);
    for (const auto& s : stops)
      if (text.find(s) != std::string::npos) return true;
    return false;
  };
}

// generate's own decoding where a request leaves it unset (0, or < 0 for temperature and top_p): 256 new
// tokens, greedy, one rollout.
void fill_unset_decoding(JobConfig& job) {
  if (job.max_new <= 0) job.max_new = 256;
  if (job.temperature < 0) job.temperature = 0.0;
  if (job.top_p < 0) job.top_p = 1.0;
  if (job.rollouts <= 0) job.rollouts = 1;
}

json nested_json(const at::Tensor& t) {  // any-rank tensor → nested lists
  if (t.dim() == 1) {
    if (t.scalar_type() == at::kLong) {
      const at::Tensor c = t.contiguous();
      return json(std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()));
    }
    const at::Tensor c = t.to(at::kFloat).contiguous();
    return json(std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel()));
  }
  json out = json::array();
  for (int64_t i = 0; i < t.size(0); ++i) out.push_back(nested_json(t[i]));
  return out;
}

json refresh_json(const RefreshRecord& r) {  // rollout 0's view
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

}  // namespace

Generation generate(const LoadedModel& model, const GenerateRequest& given, Policy* policy) {
  GenerateRequest request = given;
  fill_unset_decoding(request.job);
  request.job.budget.allocator = find_allocator(request.job.budget.allocator).spec();
  const Tokenizer* tokenizer = model.tokenizer ? &*model.tokenizer : nullptr;
  const EncodedInput prompt = encode(request.prompt, tokenizer);
  if (request.job.budget.frozen == "auto" && request.prompt.system.empty())
    fail("frozen auto needs a system prompt (the text it freezes)");
  const Profile profile = parse_profile(request.job.profile);
  std::unique_ptr<Policy> own;
  Generation out;
  if (policy) {
    out.policy = policy->spec();
  } else {
    own = make_policy(policy_spec(request.job, profile));
    policy = own.get();
    out.policy = with_normal_specs(request.job).policy;  // as a job names it: without its fields' and presets' knobs
  }
  out.settings =
      generation_settings(request.job, profile, *policy, prompt.system_tokens, tokenizer, prompt.ids.size());
  out.settings.sampling.top_k = request.top_k;  // a knob of generate alone, not a job field
  out.result = kvbench::generate(model.model, *policy, prompt.ids, out.settings, stop_strings(request.stop, tokenizer));
  for (const RolloutResult& rollout : out.result.rollouts)
    out.texts.push_back(tokenizer ? tokenizer->decode(rollout.generated) : std::string());
  return out;
}

json generation_json(const Generation& generation) {
  const GenerationResult& result = generation.result;
  const GenerationSettings& settings = generation.settings;
  json out = {{"prompt_ids", result.prompt},
              {"generated_ids", result.rollouts[0].generated},
              {"text", generation.texts[0]},
              {"stop_reason", result.rollouts[0].stop_reason},
              {"policy", generation.policy},
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
  if (result.rollouts.size() > 1) {
    out["rollouts"] = json::array();
    for (size_t r = 0; r < result.rollouts.size(); ++r)
      out["rollouts"].push_back({{"generated_ids", result.rollouts[r].generated},
                                 {"text", generation.texts[r]},
                                 {"stop_reason", result.rollouts[r].stop_reason}});
  }
  return out;
}

ResolvedJob resolve(const JobConfig& job, const std::filesystem::path& data_root) {
  return resolve_job(job, data_root);
}

ResolvedJob resolve(const json& job, const std::string& where, const std::filesystem::path& data_root) {
  return resolve_job(job_from_json(job, where), data_root);
}

JobRun run(const ResolvedJob& job, const RunRequest& request, const LoadedModel* model) {
  JobRun done{request.out.empty() ? std::filesystem::path("results/" + job.label() + ".h5") : request.out, {}};
  std::optional<LoadedModel> own;
  const ModelLoader load = [&]() -> ModelRef {
    if (!model) model = &own.emplace(load_job_model(job));
    if (!model->tokenizer)
      fail("{}: no tokenizer (tokenizer.json, or a GGUF's vocabulary) (runs decode and grade text)", job.model);
    return {model->model, *model->tokenizer};
  };
  done.outcome = run_job(job, done.out, load,
                         {request.force, request.progress, request.label.empty() ? job.label() : request.label,
                          request.batch, request.after_sample});
  return done;
}

namespace {
using TableBuilder = std::function<std::vector<Table>(const std::vector<JobResults>&)>;

const std::vector<std::pair<std::string, TableBuilder>>& table_builders() {
  auto one = [](Table (*build)(const std::vector<JobResults>&)) {
    return [build](const std::vector<JobResults>& jobs) { return std::vector<Table>{build(jobs)}; };
  };
  static const std::vector<std::pair<std::string, TableBuilder>> builders = {
      {"overview", one(overview_table)},
      {"policies", policy_model_tables},
      {"aime", one(aime_table)},
      {"accuracy-vs-j", accuracy_vs_j_tables},
      {"key-retention", key_retention_tables},
      {"by-retention", retention_split_tables},
      {"latency", one(latency_table)},
      {"paired", one(paired_table)},
      {"overlap", overlap_tables},
      {"overlap-refreshes", overlap_refresh_tables},
      {"fidelity", fidelity_tables},
      {"attention-loss", attention_loss_tables},
      {"niah", niah_tables}};
  return builders;
}
}  // namespace

std::vector<std::string> report_table_names() {
  std::vector<std::string> names;
  for (const auto& [name, build] : table_builders()) names.push_back(name);
  return names;
}

std::vector<Table> report_tables(const std::vector<std::filesystem::path>& files, const std::vector<std::string>& names,
                                 const TableFilter& filter) {
  std::vector<JobResults> jobs;
  for (const auto& file : files) jobs.push_back(load_job_results(file));
  jobs = filter_jobs(jobs, filter);
  std::vector<Table> tables;
  for (const auto& name : names) {
    const auto& builders = table_builders();
    const auto it = std::find_if(builders.begin(), builders.end(), [&](const auto& b) { return b.first == name; });
    if (it == builders.end()) fail("unknown table \"{}\"", name);
    for (Table& table : it->second(jobs)) tables.push_back(std::move(table));
  }
  return tables;
}

}  // namespace kvbench::api
