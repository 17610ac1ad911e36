// `kvbench train-demo`: trains the project's demo model (see train/demo.h) and reports its recall.
// `kvbench train-scorer`: trains a KVpop retention scorer on a model's full-cache passes.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/spec.h"
#include "tasks/jsonl.h"
#include "tasks/task.h"
#include "train/demo.h"
#include "train/kvpop_training.h"

namespace kvbench::cli {

namespace {

struct TrainDemoOptions {
  std::string out;
  DemoSettings settings;
  int eval_samples = 50;
  std::vector<int> eval_words = {150, 300};
};

void run_train_demo(const TrainDemoOptions& o) {
  train_demo(o.out, o.settings);
  if (o.eval_samples <= 0) return;
  const Model model = Model::load(o.out);
  const Tokenizer tokenizer = Tokenizer::load(o.out);
  for (const int words : o.eval_words) {
    tasks::RareFactSpec spec;  // seed 0: the task's default evaluation stories, never trained on
    spec.samples = o.eval_samples;
    spec.words = words;
    spdlog::info("held-out rare-fact recall (full cache, greedy), {} samples of {} words: {:.3f}", spec.samples, words,
                 rare_fact_recall(model, tokenizer, spec));
  }
  tasks::RareFactSpec held_out, bigram_corpus;  // held out: seed 0 again; the bigram counts a training seed
  held_out.samples = o.eval_samples;
  held_out.words = o.eval_words.front();
  bigram_corpus.seed = o.settings.corpus_seed;
  bigram_corpus.samples = 1000;
  bigram_corpus.words = held_out.words;
  const FillerLoss filler = filler_loss(model, tokenizer, held_out, bigram_corpus);
  spdlog::info("held-out filler loss ({} tokens): model {:.3f} nats/token, bigram baseline {:.3f}", filler.tokens,
               filler.model, filler.bigram);
}

}  // namespace

void add_train_demo_command(CLI::App& app) {
  auto o = std::make_shared<TrainDemoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train-demo",
      "Train the demo model (small Llama + byte-level BPE) on fresh rare-fact stories every step, on CPU.\n"
      "Example: kvbench train-demo --out models/kvbench-demo --threads 1");
  DemoSettings& s = o->settings;
  cmd->add_option("--out", o->out, "Output model directory")->required();
  cmd->add_option("--seed", s.seed, "Weight initialisation")->capture_default_str();
  cmd->add_option("--steps", s.steps, "Optimizer steps")->capture_default_str();
  cmd->add_option("--batch-size", s.batch_size, "Sequences per step")->capture_default_str();
  cmd->add_option("--lr", s.peak_lr, "Peak learning rate (cosine decay to --min-lr)")->capture_default_str();
  cmd->add_option("--min-lr", s.min_lr, "Final learning rate")->capture_default_str();
  cmd->add_option("--warmup", s.warmup_steps, "Linear warm-up steps")->capture_default_str();
  cmd->add_option("--layers", s.layers, "Decoder layers")->capture_default_str();
  cmd->add_option("--hidden", s.hidden, "Hidden size")->capture_default_str();
  cmd->add_option("--heads", s.heads, "Query heads")->capture_default_str();
  cmd->add_option("--kv-heads", s.kv_heads, "KV heads")->capture_default_str();
  cmd->add_option("--intermediate", s.intermediate, "MLP width")->capture_default_str();
  cmd->add_option("--key-smear", s.key_smear,
                  "Mix each token's layer-0 key with the previous token's (learned gate per KV head): induction "
                  "in one layer, so recall forms in hundreds of steps instead of not at all here")
      ->capture_default_str();
  cmd->add_option("--corpus-seed", s.corpus_seed, "Generator seed of the first training story")->capture_default_str();
  cmd->add_option("--max-facts", s.max_facts, "Facts per training story: 1..this, each queried")
      ->capture_default_str();
  cmd->add_option("--min-words", s.min_words, "Shortest training filler (words)")->capture_default_str();
  cmd->add_option("--short-words", s.short_words, "Longest training filler for the first --short-steps steps")
      ->capture_default_str();
  cmd->add_option("--long-words", s.long_words, "Longest training filler afterwards")->capture_default_str();
  cmd->add_option("--short-steps", s.short_steps, "Steps on short stories first")->capture_default_str();
  cmd->add_option("--tokenizer-stories", s.tokenizer_stories, "Training stories the BPE tokenizer is learned from")
      ->capture_default_str();
  cmd->add_option("--answer-weight", s.answer_weight, "Loss weight of the answer tokens")->capture_default_str();
  cmd->add_option("--probe-every", s.probe_every, "Held-out recall probe every n steps (0 = never)")
      ->capture_default_str();
  cmd->add_option("--probe-samples", s.probe_samples, "Stories per recall probe")->capture_default_str();
  cmd->add_option("--probe-words", s.probe_words, "Filler length of the probe's stories")->capture_default_str();
  cmd->add_option("--threads", s.threads, "Intra-op threads (bit-for-bit reproduction needs the same count)")
      ->capture_default_str();
  cmd->add_option("--eval-samples", o->eval_samples, "Held-out rare-fact samples (seed 0) per length; 0 = skip")
      ->capture_default_str();
  cmd->add_option("--eval-words", o->eval_words, "Filler lengths of the held-out evaluation")->capture_default_str();
  cmd->callback([o] { run_train_demo(*o); });
}

namespace {

struct TrainScorerOptions {
  ModelOptions model;
  std::string data, eval_data, out, kind = "linear";
  ScorerTrainingOptions training;
  FutureMassSpec mass;
  double gamma = 1.0;
  int64_t max_tokens = 1024, recall_stride = 4;
  bool no_delay = false;  // mlstm ablation: read each token's score at insertion
};

// The generated task `data` names ("rare-fact:seed=7,…"), if it names one.
std::unique_ptr<tasks::Task> generated_task(const std::string& data) {
  const std::string name = parse_spec(data, "data").name;
  const std::vector<std::string> names = tasks::task_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return nullptr;
  auto task = tasks::make_task(name);
  return task->reads_dataset() ? nullptr : std::move(task);
}

// Token sequences of --data: a generated task's spec (each sample's raw prompt + the task's answer text) or
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

void run_train_scorer(TrainScorerOptions o) {
  o.training.shape.kind = parse_scorer_kind(o.kind);
  // The mLSTM reads a token when it leaves the protected window, w tokens after it arrived.
  o.training.shape.delay = o.no_delay ? 0 : o.training.budget.window;
  o.mass.window = o.training.budget.window;
  o.mass.gamma = {o.gamma};
  const Model model = o.model.load();
  const Tokenizer tokenizer = Tokenizer::load(o.model.model);
  const auto train = analyse(model, load_sequences(o.data, tokenizer, o.max_tokens), o.mass, false);
  const KvpopScorer scorer = train_kvpop_scorer(train, o.training);
  std::map<std::string, std::string> metadata = {
      {"sinks", std::to_string(o.training.budget.sinks)}, {"window", std::to_string(o.training.budget.window)},
      {"k", std::to_string(o.training.budget.k)},         {"gamma", fmt::format("{}", o.gamma)},
      {"decay_period", std::to_string(o.mass.decay_period)}, {"epsilon", fmt::format("{}", o.mass.epsilon)},
      {"temperature", fmt::format("{}", o.training.temperature)}, {"model", o.model.model},
      {"data", o.data}};
  if (!o.eval_data.empty()) {
    const auto held_out = analyse(model, load_sequences(o.eval_data, tokenizer, o.max_tokens), o.mass, true);
    const RecallReport r = oracle_recall(held_out, &scorer, o.training.budget, o.recall_stride);
    spdlog::info("recall of the future-attention oracle's top-{} on {} ({} decisions): learned {:.3f}, "
                 "untrained fallback (accumulated attention) {:.3f}, recency {:.3f}",
                 o.training.budget.k, o.eval_data, r.decisions, r.learned, r.fallback, r.recency);
    metadata["eval_data"] = o.eval_data;
    metadata["recall_learned"] = fmt::format("{:.4f}", r.learned);
    metadata["recall_fallback"] = fmt::format("{:.4f}", r.fallback);
    metadata["recall_recency"] = fmt::format("{:.4f}", r.recency);
  }
  scorer.save(o.out, metadata);
  spdlog::info("scorer ({}) written to {}", o.kind, o.out);
}

}  // namespace

void add_train_scorer_command(CLI::App& app) {
  auto o = std::make_shared<TrainScorerOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train-scorer",
      "Train a KVpop retention scorer (headwise linear or MLP on [k; v], or the stateful mLSTM) on\n"
      "future-attention-mass targets with the boundary pairwise loss.\n"
      "Example: kvbench train-scorer --model models/kvbench-demo --data rare-fact:seed=7,samples=32,words=300 "
      "--eval-data rare-fact:seed=8,samples=8,words=300 --s 4 --w 32 --k 64 --out scorer.safetensors");
  o->model.add_to(cmd);
  cmd->add_option("--data", o->data,
                  "Training texts: a generated task's spec (rare-fact:seed=7,samples=32: each sample's prompt and "
                  "answer) or a JSONL file of {\"text\": ...}")->required();
  cmd->add_option("--eval-data", o->eval_data, "Held-out texts: report recall of the oracle's kept set");
  cmd->add_option("--out", o->out, "Scorer weights (safetensors)")->required();
  cmd->add_option("--s", o->training.budget.sinks, "Sink tokens (never candidates)")->capture_default_str();
  cmd->add_option("--w", o->training.budget.window, "Protected recent window")->capture_default_str();
  cmd->add_option("--k", o->training.budget.k, "Long-range slots per KV head")->capture_default_str();
  cmd->add_option("--kind", o->kind,
                  "linear or mlp (headwise on [k; v]), or mlstm: KVpop's stateful scorer, an mLSTM memory over the\n"
                  "tokens in order that scores a token when it leaves the protected window (policies/kvpop_mlstm.h)")
      ->check(CLI::IsMember({"linear", "mlp", "mlstm"}))
      ->capture_default_str();
  cmd->add_option("--hidden", o->training.shape.hidden, "MLP width, or mLSTM memory width")->capture_default_str();
  cmd->add_flag("--no-delay", o->no_delay,
                "mlstm ablation: read each token's score when it enters (not when it leaves the window), the\n"
                "paper's delayed-vs-not comparison");
  cmd->add_option("--tau", o->training.temperature, "Temperature of the pairwise logistic loss")->capture_default_str();
  cmd->add_option("--gamma", o->gamma, "Decay γ of future attention, applied per n tokens of distance")
      ->capture_default_str();
  cmd->add_option("--decay-period", o->mass.decay_period, "n of the decay γ^⌊(q−t)/n⌋")->capture_default_str();
  cmd->add_option("--epsilon", o->mass.epsilon, "ε of the log target")->capture_default_str();
  cmd->add_option("--steps", o->training.steps, "Optimizer steps")->capture_default_str();
  cmd->add_option("--lr", o->training.lr, "Peak learning rate (AdamW, cosine)")->capture_default_str();
  cmd->add_option("--seed", o->training.seed, "Initialisation and sequence order")->capture_default_str();
  cmd->add_option("--max-tokens", o->max_tokens, "Truncate texts to this many tokens")->capture_default_str();
  cmd->add_option("--recall-stride", o->recall_stride, "Evaluate every n-th decoding step")->capture_default_str();
  o->training.log_every = 50;
  cmd->callback([o] { run_train_scorer(*o); });
}

}  // namespace kvbench::cli
