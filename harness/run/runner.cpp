#include "run/runner.h"

#include <ATen/Parallel.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <list>
#include <optional>
#include <set>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "common/build_info.h"
#include "common/error.h"
#include "engine/allocator.h"
#include "engine/generate.h"
#include "model/cpu_threads.h"
#include "run/job_lock.h"
#include "run/journal.h"
#include "run/key_retention.h"
#include "run/profile.h"
#include "run/progress.h"
#include "tokenizer/utf8.h"

namespace kvbench {

namespace {

// Characters, as Python's len counts them: UTF-8 bytes that start one.
int64_t code_points(const std::string& text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

// kvpress/pipeline.py's preprocess: with a chat template, the context is the user turn (thinking off), rendered
// with a separator after it and split there, so that the question follows the context inside the turn and
// the turn's end and the assistant header follow the question; without one, BOS + context, and "\n" after the
// question. Then the answer prefix. Context and question are tokenized apart, without special tokens.
// With compress_questions the question joins the context: as one text, or, for a policy that reads the question's
// window, after kvpress's delimiter token, which splits the tokenization there and is then dropped (FinchPress).
EncodedPrompt kvpress_prompt(const tasks::PromptParts& parts, const Tokenizer& tokenizer, bool chat,
                             bool compress_questions, bool question_apart) {
  static const std::string kDelimiter = "<|finch_sep|>";
  std::string context = parts.context, question = parts.question, suffix = "\n";
  const bool window = compress_questions && question_apart;
  if (compress_questions) {
    context += window ? kDelimiter + question : question;
    question.clear();
  }
  std::vector<int64_t> ids;
  if (chat) {
    const std::string separator(code_points(context) + 10, '#');
    const std::string rendered =
        tokenizer.apply_chat_template({{"user", context + separator}}, true, /*enable_thinking=*/false);
    const std::size_t at = rendered.find(separator);
    context = rendered.substr(0, at);
    suffix = rendered.substr(at + separator.size());
  } else if (const std::optional<int64_t> bos = tokenizer.bos_id()) {
    ids.push_back(*bos);
  }
  std::vector<int64_t> query_ids;
  if (window) {
    const std::size_t at = context.rfind(kDelimiter);
    query_ids = tokenizer.encode(context.substr(at + kDelimiter.size()), false);
    context.resize(at);
  }
  const std::vector<int64_t> context_ids = tokenizer.encode(context, false);
  const std::vector<int64_t> question_ids = tokenizer.encode(question + suffix + parts.answer_prefix, false);
  ids.insert(ids.end(), context_ids.begin(), context_ids.end());
  ids.insert(ids.end(), query_ids.begin(), query_ids.end());
  ids.insert(ids.end(), question_ids.begin(), question_ids.end());
  return {ids, 0, static_cast<int64_t>(question_ids.size()), static_cast<int64_t>(query_ids.size())};
}

}  // namespace

EncodedPrompt encode_prompt(const tasks::Prompt& prompt, const Tokenizer& tokenizer, const JobConfig& job,
                            const PolicyNeeds& needs) {
  const bool chat = job.prompt_mode == "chat";
  if (chat && !tokenizer.has_chat_template()) fail("--prompt-mode chat: the model's tokenizer has no chat template");
  if (job.pipeline == "kvpress") {
    if (!prompt.parts)
      fail("task {} gives no context and question apart, which --pipeline kvpress needs (ruler, niah, longhealth, "
           "qasper, locomo and rare-fact do)",
           job.task);
    return kvpress_prompt(*prompt.parts, tokenizer, chat, job.compress_questions, needs.query_window);
  }
  if (!chat) {
    const int64_t system = prompt.system_text.empty() ? 0 : tokenizer.encode(prompt.system_text, true).size();
    return {tokenizer.encode(prompt.raw, true), system};
  }
  const auto& messages = prompt.messages;
  int64_t system = 0;
  if (!messages.empty() && messages.front().role == "system")
    system = tokenizer.encode(tokenizer.apply_chat_template({messages.front()}, false), false).size();
  return {tokenizer.encode(tokenizer.apply_chat_template(messages, true), false), system};
}

std::vector<tasks::Sample> job_samples(const ResolvedJob& job, const Tokenizer& tokenizer) {
  const tasks::TokenCounter count_tokens = [&tokenizer](std::string_view text) {
    return static_cast<int64_t>(tokenizer.encode(text, /*add_special_tokens=*/false).size());
  };
  std::vector<tasks::Sample> all = job.benchmark().load(job.data, count_tokens);
  if (!job.samples.empty()) {
    std::set<std::string> wanted(job.samples.begin(), job.samples.end());
    std::vector<tasks::Sample> chosen;
    for (auto& sample : all)
      if (wanted.erase(sample.id)) chosen.push_back(std::move(sample));
    if (!wanted.empty()) fail("{}: no sample with id \"{}\"", job.data, *wanted.begin());
    all = std::move(chosen);
  }
  if (job.limit > 0 && static_cast<int64_t>(all.size()) > job.limit) all.resize(job.limit);
  return all;
}

namespace {

// Row `rollout` of a refresh record's [B, ...] tensor. Prefill refreshes happen before the rollouts fork
// (batch 1); they are every rollout's history.
at::Tensor rollout_of(const at::Tensor& t, int64_t rollout) { return t[std::min(rollout, t.size(0) - 1)].contiguous(); }

// Kept positions of rollout b, flattened: [M] token level or [L, KV, M] per head; token-level scores [n].
RefreshTrace trace_of(const RefreshRecord& record, int64_t rollout) {
  const at::Tensor kept = rollout_of(record.kept_positions, rollout);
  RefreshTrace t;
  t.row = rollout;
  t.phase = record.phase;
  t.step = record.step;
  t.processed = record.processed;
  t.size_before = record.size_before;
  t.size_after = record.size_after;
  if (kept.dim() == 3) {
    t.layers = kept.size(0);
    t.kv_heads = kept.size(1);
  }
  t.kept_positions.assign(kept.data_ptr<int64_t>(), kept.data_ptr<int64_t>() + kept.numel());
  if (record.scores.defined() && record.scores.dim() == 2) {  // per-head scores (L × KV × n) are not stored
    const at::Tensor scores = rollout_of(record.scores, rollout);
    t.scores.assign(scores.data_ptr<float>(), scores.data_ptr<float>() + scores.numel());
  }
  t.candidates_begin = record.candidates_begin;
  t.candidates_end = record.candidates_end;
  t.scoring_ms = record.scoring_ms;
  t.compaction_ms = record.compaction_ms;
  return t;
}

// The shadow's attention lost over one refresh's window (engine/shadow.h), for rollout b.
void add_lost_attention(RefreshTrace& trace, const LostAttention& lost, int64_t rollout) {
  trace.shadow_lost_by_layer = lost.by_rollout[rollout];
  const auto values = static_cast<int64_t>(trace.shadow_lost_by_layer.size());
  trace.shadow_lost_queries = values / lost.layers;
  double sum = 0.0;
  for (const float value : trace.shadow_lost_by_layer) sum += value;
  trace.shadow_lost_mass = values == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(values);
}

// The cache a sample's generation will hold at its largest, checked against this machine's memory before a
// byte is allocated: an out-of-memory kill mid-sweep says nothing, this says which knob to turn.
void check_cache_fits(const ResolvedJob& job, const Policy& policy, const GenerationSettings& settings,
                      const Model& model, int64_t prompt_tokens, const std::string& sample_id) {
  if (job.device != "cpu") return;  // device memory is the device runtime's to report
  const ModelConfig& c = model.config();
  const CacheBudget& budget = settings.budget;
  const int64_t longest = prompt_tokens + settings.max_new_tokens;
  const bool bounded = policy.evicts() && !budget.own_budget;
  const int64_t tokens = (bounded ? std::min(longest, budget.frozen + budget.J + budget.h) : longest) +
                         (job.shadow_full() ? longest : 0);  // the shadow's full cache
  const int64_t element_bytes = job.dtype == "float32" ? 4 : 2;
  const double bytes = 2.0 * static_cast<double>(c.num_layers * c.num_kv_heads * c.head_dim * element_bytes) *
                       static_cast<double>(tokens) * static_cast<double>(job.rollouts);
  const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  if (bytes > memory)
    fail("sample {}: its KV cache would need {:.1f} GiB ({} tokens × {} rollouts), more than this machine's {:.1f} "
         "GiB; lower max_new, rollouts or J",
         sample_id, bytes / (1 << 30), tokens, job.rollouts, memory / (1 << 30));
}

// One sample on its way through generation: what it needs from start to grading.
struct SampleInFlight {
  const tasks::Sample& sample;
  EncodedPrompt prompt;
  std::shared_ptr<Policy> policy;
  std::unique_ptr<SampleGeneration> generation;
  int64_t budget_J = 0;  // the J its refreshes keep (a ratio budget's share of this prompt)
  bool replay = false;  // run again only to rebuild the state a carrying policy passes on (run_job)
};

// A fresh policy per sample: results never depend on which samples ran before (resume, shards, batching).
// Only a policy that carries state across samples (the paper's h2o hook under --profile reference) is
// `carried`: one instance for every sample, in order.
std::unique_ptr<SampleInFlight> start_sample(const ResolvedJob& job, const tasks::Sample& sample, const Model& model,
                                             const Tokenizer& tokenizer, std::shared_ptr<Policy> carried) {
  const tasks::Task& task = job.benchmark();
  std::shared_ptr<Policy> policy = carried ? std::move(carried) : std::shared_ptr<Policy>(job.make_policy());
  auto in_flight = std::make_unique<SampleInFlight>(
      SampleInFlight{sample, encode_prompt(task.prompt(sample), tokenizer, job, policy->needs()), policy, nullptr});
  const EncodedPrompt& prompt = in_flight->prompt;
  GenerationSettings settings =
      generation_settings(job, *in_flight->policy, prompt.system_tokens, &tokenizer, prompt.context_tokens());
  settings.question_tokens = prompt.question_tokens;
  settings.query_window = prompt.query_tokens;
  settings.max_new_tokens = sample_max_new(job, sample);
  in_flight->budget_J = settings.budget.J;
  check_cache_fits(job, *in_flight->policy, settings, model, static_cast<int64_t>(prompt.ids.size()), sample.id);
  StopCheck stop = [&task, &tokenizer](int64_t, const std::vector<int64_t>& generated) {
    return task.should_stop(tokenizer.decode(generated));
  };
  try {
    in_flight->generation = std::make_unique<SampleGeneration>(model, *in_flight->policy, prompt.ids, settings, stop);
  } catch (const Error& e) {
    fail("sample {}: {}", sample.id, e.what());
  }
  return in_flight;
}

// Grades every rollout of a finished sample and collects its rows and refresh traces.
SampleResults finish_sample(const ResolvedJob& job, SampleInFlight& in_flight, const Tokenizer& tokenizer) {
  const tasks::Task& task = job.benchmark();
  const tasks::Sample& sample = in_flight.sample;
  const GenerationResult result = in_flight.generation->take();
  const std::vector<int64_t> keys = key_positions(in_flight.prompt.ids, tokenizer, task.key_texts(sample));
  SampleResults out;
  for (int64_t b = 0; b < job.rollouts; ++b) {
    const RolloutResult& rollout = result.rollouts[b];
    ResultRow row;
    row.sample_id = sample.id;
    row.rollout = b;
    row.seed = static_cast<int64_t>(job.seed);
    row.prompt_length = static_cast<int64_t>(in_flight.prompt.ids.size());
    row.generated_ids = rollout.generated;
    row.stop_reason = rollout.stop_reason;
    row.output = utf8::repair(tokenizer.decode(rollout.generated));
    const tasks::Grade grade = tasks::grade_total(task, sample, row.output, fmt::format("sample {}", sample.id));
    row.pred = grade.pred;
    row.score = grade.score;
    row.gold = sample.record.dump();
    row.wall_seconds = result.prefill_seconds + result.decode_seconds;
    row.refresh_count = static_cast<int64_t>(result.refreshes.size());
    row.mean_cache_size = result.mean_cache_size;
    row.peak_cache_size = result.peak_cache_size;
    row.mean_entries_per_head = result.mean_entries_per_head;
    row.peak_cache_bytes = static_cast<double>(result.peak_cache_bytes);
    row.key_retention = key_retention(result, b, keys);
    row.budget_J = in_flight.budget_J;
    if (!result.fidelity.empty()) {
      row.shadow_kl = result.fidelity[b].kl;
      row.shadow_top1 = result.fidelity[b].top1_agree;
    }
    out.rows.push_back(std::move(row));
    for (size_t i = 0; i < result.refreshes.size(); ++i) {
      RefreshTrace trace = trace_of(result.refreshes[i], b);
      if (!result.lost_attention.empty()) add_lost_attention(trace, result.lost_attention[i], b);
      out.refreshes.push_back(std::move(trace));
    }
  }
  return out;
}

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// Rows in sample order; trace.row becomes an index into the file's rows.
Results assemble(const std::vector<tasks::Sample>& samples, const Journal& journal) {
  Results results;
  for (const auto& sample : samples) {
    const SampleResults& done = journal.finished().at(sample.id);
    const auto base = static_cast<int64_t>(results.rows.size());
    results.rows.insert(results.rows.end(), done.rows.begin(), done.rows.end());
    for (RefreshTrace trace : done.refreshes) {
      trace.row += base;
      results.refreshes.push_back(std::move(trace));
    }
  }
  results.summary = summarize(results.rows);
  return results;
}

void write_atomically(const std::filesystem::path& out, const Results& results) {
  const std::filesystem::path aside = out.string() + ".tmp";
  write_results(aside, results);
  std::filesystem::rename(aside, out);
}

}  // namespace

std::filesystem::path default_data_root() {
  if (const char* root = std::getenv("KVBENCH_DATA"); root && *root) return root;
  if (const char* home = std::getenv("HOME")) {
    const std::filesystem::path cache = std::filesystem::path(home) / ".cache/kvbench/datasets";
    if (std::filesystem::exists(cache)) return cache;
  }
  // The development setup's staged data, then the repository's fixtures.
  return std::filesystem::exists("../shared/datasets") ? "../shared/datasets" : "datasets";
}

std::filesystem::path journal_path(const std::filesystem::path& out) { return out.string() + ".partial.jsonl"; }

namespace {

void prepare_output_directory(const std::filesystem::path& out) {
  const std::filesystem::path dir = out.parent_path().empty() ? "." : out.parent_path();
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) fail("{}: cannot create the output directory ({})", dir.string(), error.message());
  if (::access(dir.c_str(), W_OK) != 0) fail("{}: the output directory is not writable", dir.string());
}

}  // namespace

namespace {

// Whether `out` holds this job's results (true) or nothing yet (false); refuses a file of another job, or
// not a results file, unless `force` (which replaces it).
bool output_complete(const std::filesystem::path& out, const JobConfig& job, bool force) {
  if (!std::filesystem::exists(out) || force) return false;
  json existing;
  try {
    existing = json::parse(read_run_info(out).config_json);
  } catch (const std::exception& e) {
    fail("{} exists and is not a kvbench results file ({}); pass --force to replace it", out.string(), e.what());
  }
  if (current_form(existing) != to_json(job))
    fail("{} holds results of a different job (its config: {}); use another --out or pass --force to replace it",
         out.string(), existing.dump());
  return true;
}

RunOutcome already_complete(const std::filesystem::path& out) {
  RunOutcome outcome;
  outcome.already_complete = true;
  outcome.summary = read_results(out).summary;
  return outcome;
}

}  // namespace

RunOutcome run_job(const ResolvedJob& job, const std::filesystem::path& out, const ModelLoader& load_model,
                   const RunOptions& options) {
  prepare_output_directory(out);  // the lock file's home
  // A complete job is left as it is without waiting for its lock, whoever holds it (a process tidying up).
  if (output_complete(out, job, options.force)) {
    if (const std::optional<JobLock> lock = JobLock::try_take(out))
      std::filesystem::remove(journal_path(out));  // killed between the final rename and the cleanup
    return already_complete(out);
  }
  // Then the lock, and under it everything else: the output again (another process may have finished it
  // meanwhile), the journal, the results.
  RunOutcome outcome;
  const std::optional<JobLock> lock = JobLock::try_take(out);
  if (!lock) {
    outcome.held = true;
    return outcome;
  }
  if (output_complete(out, job, options.force)) {
    std::filesystem::remove(journal_path(out));
    return already_complete(out);
  }
  const ModelRef loaded = load_model();
  const Model& model = loaded.model;
  const Tokenizer& tokenizer = loaded.tokenizer;
  const std::vector<tasks::Sample> samples = job_samples(job, tokenizer);
  if (samples.empty()) fail("{}: no samples selected", job.data);
  if (const auto differences = differences_from_paper(job); !differences.empty() && options.progress)
    spdlog::info("profile kvbench differs from the paper's code for this job in: {} (--profile reference reproduces "
                 "it)", fmt::join(differences, "; "));
  Journal journal = Journal::open(journal_path(out), to_json(job), options.force);
  outcome.resumed = static_cast<int64_t>(journal.finished().size());
  // A carrying policy runs the samples one at a time, in order, and on resume runs the finished ones again
  // (unrecorded) to pass on exactly the state they passed on before.
  std::shared_ptr<Policy> carried(job.make_policy());
  if (!carried->carries_across_samples()) carried.reset();
  const int64_t batch = carried ? 1 : options.batch > 0 ? options.batch : default_batch(model);
  {
    std::optional<Progress> progress;
    if (options.progress)
      progress.emplace(options.label.empty() ? job.label() : options.label, samples.size(), outcome.resumed);
    // Samples run `batch` at a time; each is journaled the moment it finishes, so a kill loses only
    // the samples still decoding.
    auto next_sample = samples.begin();
    std::list<std::unique_ptr<SampleInFlight>> in_flight;
    auto next = [&]() -> SampleGeneration* {
      while (!carried && next_sample != samples.end() && journal.finished().count(next_sample->id)) ++next_sample;
      if (next_sample == samples.end()) return nullptr;
      const bool replay = journal.finished().count(next_sample->id) > 0;
      in_flight.push_back(start_sample(job, *next_sample++, model, tokenizer, carried));
      in_flight.back()->replay = replay;
      return in_flight.back()->generation.get();
    };
    auto finished = [&](SampleGeneration* generation) {
      const auto it = std::find_if(in_flight.begin(), in_flight.end(),
                                   [&](const auto& s) { return s->generation.get() == generation; });
      if (!(*it)->replay) {
        journal.append(finish_sample(job, **it, tokenizer));
        if (progress) progress->advance();
      }
      in_flight.erase(it);
      if (options.after_sample) options.after_sample();
    };
    try {
      generate_continuously(model, batch, next, finished);
    } catch (const Error& e) {
      if (in_flight.size() == 1) fail("sample {}: {}", in_flight.front()->sample.id, e.what());
      throw;
    }
    if (progress) progress->finish();
  }
  Results results = assemble(samples, journal);
  results.info = {KVBENCH_VERSION, git_commit(), to_json(job).dump(), TORCH_VERSION,
                  job.device,      job.dtype,          host_name(),         journal.start_time(),
                  utc_timestamp(), batch,              at::get_num_threads()};
  // Every sample of a task shares its system prompt, so the first sample's budget is every sample's.
  const int64_t system_tokens = encode_prompt(job.benchmark().prompt(samples.front()), tokenizer, job).system_tokens;
  results.info.settings_json = effective_settings(job, *job.make_policy(), system_tokens).dump();
  results.info.blas = blas_kernels();
  write_atomically(out, results);
  journal.remove();
  outcome.summary = results.summary;
  return outcome;
}

std::string summary_line(const std::string& label, const Summary& s) {
  return fmt::format("{}: score {:.3f} [{:.3f}, {:.3f}] pred=None {:.3f} mean length {:.1f} ({} samples, {} rows)",
                     label, s.score, s.score_ci_low, s.score_ci_high, s.pred_none_rate, s.mean_generated_length,
                     s.samples, s.rows);
}

}  // namespace kvbench
