#include "api/train.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/spec.h"
#include <limits>

#include "common/error.h"
#include "tasks/jsonl.h"
#include "train/duo_patterns.h"
#include "tasks/task.h"

namespace kvbench::api {

namespace {

DemoEvaluation evaluate_demo(const TrainDemoRequest& request) {
  const Model model = Model::load(request.out);
  const Tokenizer tokenizer = Tokenizer::load(request.out);
  DemoEvaluation out;
  out.samples = request.eval_samples;
  for (const int words : request.eval_words) {
    tasks::RareFactSpec spec;  // seed 0: the task's default evaluation stories, never trained on
    spec.samples = request.eval_samples;
    spec.words = words;
    out.recall.push_back({words, rare_fact_recall(model, tokenizer, spec)});
  }
  tasks::RareFactSpec held_out, bigram_corpus;  // held out: seed 0 again; the bigram counts a training seed
  held_out.samples = request.eval_samples;
  held_out.words = request.eval_words.front();
  bigram_corpus.seed = request.settings.corpus_seed;
  bigram_corpus.samples = 1000;
  bigram_corpus.words = held_out.words;
  out.filler = filler_loss(model, tokenizer, held_out, bigram_corpus);
  return out;
}

// The generated task `data` names ("rare-fact:seed=7,…"), if it names one.
std::unique_ptr<tasks::Task> generated_task(const std::string& data) {
  const std::string name = parse_spec(data, "data").name;
  const std::vector<std::string> names = tasks::task_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return nullptr;
  auto task = tasks::make_task(name);
  return task->reads_dataset() ? nullptr : std::move(task);
}

// Token sequences of `data`: a generated task's spec (each sample's raw prompt + the task's answer text) or
// a JSONL file of {"text": ...}.
std::vector<std::vector<int64_t>> load_sequences(const std::string& data, const Tokenizer& tokenizer,
                                                 int64_t max_tokens) {
  std::vector<std::string> texts;
  if (const auto task = generated_task(data)) {
    for (const auto& sample : task->load(data)) texts.push_back(task->prompt(sample).raw + task->answer_text(sample));
  } else {
    for (const auto& line : tasks::read_jsonl(data)) texts.push_back(tasks::string_field(line.value, "text", line.location));
  }
  std::vector<std::vector<int64_t>> sequences;
  for (const auto& text : texts) {
    auto ids = tokenizer.encode(text, true);
    if (static_cast<int64_t>(ids.size()) > max_tokens) ids.resize(max_tokens);
    sequences.push_back(std::move(ids));
  }
  return sequences;
}

std::vector<KvpopSequence> analyse(const Model& model, const std::vector<std::vector<int64_t>>& sequences,
                                   const FutureMassSpec& mass, bool keep_attention) {
  std::vector<KvpopSequence> out;
  for (const auto& ids : sequences) out.push_back(analyse_sequence(model, ids, mass, keep_attention));
  return out;
}

// The request with the settings derived from its flags filled in.
TrainScorerRequest resolved(TrainScorerRequest r) {
  r.training.shape.kind = parse_scorer_kind(r.kind);
  // The mLSTM reads a token when it leaves the protected window, w tokens after it arrived.
  r.training.shape.delay = r.no_delay ? 0 : r.training.budget.window;
  r.mass.window = r.training.budget.window;
  r.mass.gamma = {r.gamma};
  return r;
}

// What the scorer file records of its training, so a result can be traced back to it.
std::map<std::string, std::string> scorer_metadata(const TrainScorerRequest& r) {
  return {{"sinks", std::to_string(r.training.budget.sinks)}, {"window", std::to_string(r.training.budget.window)},
          {"k", std::to_string(r.training.budget.k)},         {"gamma", fmt::format("{}", r.gamma)},
          {"decay_period", std::to_string(r.mass.decay_period)}, {"epsilon", fmt::format("{}", r.mass.epsilon)},
          {"temperature", fmt::format("{}", r.training.temperature)}, {"model", r.model.model},
          {"data", r.data}};
}

void add_recall(std::map<std::string, std::string>& metadata, const std::string& eval_data, const RecallReport& r) {
  metadata["eval_data"] = eval_data;
  metadata["recall_learned"] = fmt::format("{:.4f}", r.learned);
  metadata["recall_fallback"] = fmt::format("{:.4f}", r.fallback);
  metadata["recall_recency"] = fmt::format("{:.4f}", r.recency);
}

}  // namespace

std::optional<DemoEvaluation> train_demo(const TrainDemoRequest& request) {
  kvbench::train_demo(request.out, request.settings);
  if (request.eval_samples <= 0) return std::nullopt;
  return evaluate_demo(request);
}

std::optional<RecallReport> train_scorer(const TrainScorerRequest& request) {
  const TrainScorerRequest r = resolved(request);
  LoadedModel loaded = load_model(r.model);
  // Texts need the tokenizer: without one, Tokenizer::load fails naming the file it looked for.
  const Tokenizer tokenizer = loaded.tokenizer ? std::move(*loaded.tokenizer) : Tokenizer::load(r.model.model);
  const auto train = analyse(loaded.model, load_sequences(r.data, tokenizer, r.max_tokens), r.mass, false);
  const KvpopScorer scorer = train_kvpop_scorer(train, r.training);
  std::map<std::string, std::string> metadata = scorer_metadata(r);
  std::optional<RecallReport> recall;
  if (!r.eval_data.empty()) {
    const auto held_out = analyse(loaded.model, load_sequences(r.eval_data, tokenizer, r.max_tokens), r.mass, true);
    recall = oracle_recall(held_out, &scorer, r.training.budget, r.recall_stride);
    add_recall(metadata, r.eval_data, *recall);
  }
  scorer.save(r.out, metadata);
  return recall;
}

std::vector<std::vector<double>> duo_patterns(const DuoPatternsRequest& r) {
  if (r.samples < 1) fail("--samples must be positive (got {})", r.samples);
  LoadedModel loaded = load_model(r.model);
  const Tokenizer tokenizer = loaded.tokenizer ? std::move(*loaded.tokenizer) : Tokenizer::load(r.model.model);
  std::vector<std::vector<int64_t>> texts = load_sequences(r.data, tokenizer, std::numeric_limits<int64_t>::max());
  if (static_cast<int64_t>(texts.size()) > r.samples) texts.resize(r.samples);
  const auto scores = duo_head_scores(loaded.model, texts, r.length);
  write_duo_patterns(r.out, scores);
  return scores;
}

}  // namespace kvbench::api
