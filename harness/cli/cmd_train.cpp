// `kvbench train-demo`: trains the project's demo model (see train/demo.h) and reports its recall.
// `kvbench train-scorer`: trains a KVpop retention scorer on a model's full-cache passes.
#include <spdlog/spdlog.h>

#include "api/train.h"
#include "cli/commands.h"
#include "cli/options.h"

namespace kvbench::cli {

namespace {

void run_train_demo(const api::TrainDemoRequest& request) {
  const std::optional<api::DemoEvaluation> evaluation = api::train_demo(request);
  if (!evaluation) return;
  for (const api::DemoRecall& r : evaluation->recall)
    spdlog::info("held-out rare-fact recall (full cache, greedy), {} samples of {} words: {:.3f}", evaluation->samples,
                 r.words, r.recall);
  const FillerLoss& filler = evaluation->filler;
  spdlog::info("held-out filler loss ({} tokens): model {:.3f} nats/token, bigram baseline {:.3f}", filler.tokens,
               filler.model, filler.bigram);
}

}  // namespace

void add_train_demo_command(CLI::App& app) {
  auto o = std::make_shared<api::TrainDemoRequest>();
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
  JobCliOptions options;  // the model's
  api::TrainScorerRequest request;  // its model from `options`
};

void run_train_scorer(TrainScorerOptions o) {
  api::TrainScorerRequest& r = o.request;
  r.model = o.options.model_source();
  if (const std::optional<RecallReport> recall = api::train_scorer(r))
    spdlog::info("recall of the future-attention oracle's top-{} on {} ({} decisions): learned {:.3f}, "
                 "untrained fallback (accumulated attention) {:.3f}, recency {:.3f}",
                 r.training.budget.k, r.eval_data, recall->decisions, recall->learned, recall->fallback, recall->recency);
  spdlog::info("scorer ({}) written to {}", r.kind, r.out);
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
  o->options.add_model(cmd);
  api::TrainScorerRequest& r = o->request;
  cmd->add_option("--data", r.data,
                  "Training texts: a generated task's spec (rare-fact:seed=7,samples=32: each sample's prompt and "
                  "answer) or a JSONL file of {\"text\": ...}")->required();
  cmd->add_option("--eval-data", r.eval_data, "Held-out texts: report recall of the oracle's kept set");
  cmd->add_option("--out", r.out, "Scorer weights (safetensors)")->required();
  cmd->add_option("--s", r.training.budget.sinks, "Sink tokens (never candidates)")->capture_default_str();
  cmd->add_option("--w", r.training.budget.window, "Protected recent window")->capture_default_str();
  cmd->add_option("--k", r.training.budget.k, "Long-range slots per KV head")->capture_default_str();
  cmd->add_option("--kind", r.kind,
                  "linear or mlp (headwise on [k; v]), or mlstm: KVpop's stateful scorer, an mLSTM memory over the\n"
                  "tokens in order that scores a token when it leaves the protected window (policies/kvpop_mlstm.h)")
      ->check(CLI::IsMember({"linear", "mlp", "mlstm"}))
      ->capture_default_str();
  cmd->add_option("--hidden", r.training.shape.hidden, "MLP width, or mLSTM memory width")->capture_default_str();
  cmd->add_flag("--no-delay", r.no_delay,
                "mlstm ablation: read each token's score when it enters (not when it leaves the window), the\n"
                "paper's delayed-vs-not comparison");
  cmd->add_option("--tau", r.training.temperature, "Temperature of the pairwise logistic loss")->capture_default_str();
  cmd->add_option("--gamma", r.gamma, "Decay γ of future attention, applied per n tokens of distance")
      ->capture_default_str();
  cmd->add_option("--decay-period", r.mass.decay_period, "n of the decay γ^⌊(q−t)/n⌋")->capture_default_str();
  cmd->add_option("--epsilon", r.mass.epsilon, "ε of the log target")->capture_default_str();
  cmd->add_option("--steps", r.training.steps, "Optimizer steps")->capture_default_str();
  cmd->add_option("--lr", r.training.lr, "Peak learning rate (AdamW, cosine)")->capture_default_str();
  cmd->add_option("--seed", r.training.seed, "Initialisation and sequence order")->capture_default_str();
  cmd->add_option("--max-tokens", r.max_tokens, "Truncate texts to this many tokens")->capture_default_str();
  cmd->add_option("--recall-stride", r.recall_stride, "Evaluate every n-th decoding step")->capture_default_str();
  r.training.log_every = 50;
  cmd->callback([o] { run_train_scorer(*o); });
}

void add_duo_patterns_command(CLI::App& app) {
  struct Options {
    JobCliOptions options;  // the model's
    api::DuoPatternsRequest request;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "duo-patterns",
      "Estimate DuoAttention's head patterns on the fly, as kvpress's DuoAttentionPress(on_the_fly_scoring=True):\n"
      "per layer and KV head, how far the mean query (over a text's tokens) looks back at the mean key repeated over\n"
      "--length positions, averaged over the texts. Writes DuoAttention's attn_patterns (sink 128, recent 256), for\n"
      "--policy streaming --sinks 128 --J 384 --allocator duo:patterns=DIR,heads=R.\n"
      "Example: kvbench duo-patterns --model models/Qwen3-8B --data booksum.jsonl --out patterns/Qwen3-8B");
  o->options.add_model(cmd);
  api::DuoPatternsRequest& r = o->request;
  cmd->add_option("--data", r.data,
                  "Texts: a JSONL file of {\"text\": ...} (kvpress reads BookSum's chapters) or a generated task's spec")
      ->required();
  cmd->add_option("--out", r.out, "Patterns directory (config.json, full_attention_heads.tsv)")->required();
  cmd->add_option("--samples", r.samples, "The first n texts")->capture_default_str();
  cmd->add_option("--length", r.length, "Positions of the repeated mean query and key (kvpress's q_len)")
      ->capture_default_str();
  cmd->callback([o] {
    o->request.model = o->options.model_source();
    api::duo_patterns(o->request);
    spdlog::info("DuoAttention patterns written to {}", o->request.out);
  });
}

}  // namespace kvbench::cli
