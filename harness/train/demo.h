// The project's own demo model: a small Llama trained from scratch on the rare-fact task's generator
// (filler stories with facts "The code for locker N is XXXX." and questions about them, each followed by
// its answer), with a byte-level BPE tokenizer trained on the same text. `kvbench train-demo` runs it;
// models/kvbench-demo/ holds the committed result and its README the recipe's reasons.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/model.h"
#include "tasks/rare_fact.h"
#include "tokenizer/tokenizer.h"
#include "train/lm_trainer.h"

namespace kvbench {

// The demo tokenizer's split: a locker number is one pre-token with its space (" 17"), or, right before
// a code, together with the " is " that joins them (" 17 is "); a code is two digit pairs without a space
// ("48", "21"). Keys and values then share no token, and the token right before a code names its locker,
// so recall is plain one-hop induction: the answer's " 17 is " matches the fact's, copy what followed
// ("48"), then match "48", copy "21".
inline constexpr const char* kDemoSplit =
    R"('s|'t|'re|'ve|'m|'ll|'d| \p{N}{1,2} is (?=\p{N})| ?\p{L}+| ?\p{N}{1,2}(?!\p{N})|\p{N}{2}|\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct DemoSettings {
  uint64_t seed = 0;               // weight init
  // Model (Llama architecture, tied embeddings). Two layers suffice for induction and form it fastest.
  int64_t layers = 2, hidden = 128, heads = 4, kv_heads = 4, intermediate = 256;
  bool key_smear = true;           // ModelConfig::key_smear: the copy circuit needs one layer, not two
  // Training stories: fresh every step (a fixed set gets memorised), row r of the run from generator
  // seed corpus_seed + r, far from the task's evaluation seeds (0, 1, ...), so no test story is trained on.
  // Each has 1..max_facts facts, each queried. Filler lengths are uniform in [min_words, short_words]
  // for the first short_steps steps (short gaps first), then in [min_words, long_words].
  uint64_t corpus_seed = 1000003;
  int max_facts = 4;
  int min_words = 10, short_words = 60, long_words = 160;
  int64_t short_steps = 800;
  int tokenizer_stories = 1000;    // training rows the BPE tokenizer is learned from
  float answer_weight = 5.0f;      // loss weight of the answer tokens (the recall the demo is about)
  // Optimisation.
  int64_t steps = 1600, batch_size = 16;
  double peak_lr = 3e-3, min_lr = 1e-4;
  int64_t warmup_steps = 50;
  double weight_decay = 0.1, clip_norm = 1.0;
  // Recall probe every probe_every steps (0 = never): full-cache greedy accuracy on held-out stories.
  int64_t probe_every = 100;
  int probe_samples = 16, probe_words = 150;
  uint64_t probe_seed = 1;
  // Intra-op threads, part of the determinism conditions. One is also the fastest here: the
  // matrices are small, and more threads mostly spin.
  int64_t threads = 1;
};

// One training sequence per sample: BOS + the task's prompt with the first fact's question + its answer +
// EOS, then for every further fact its question and answer + EOS, so each fact is queried in the very form
// the task asks it. Answer tokens (and EOS) weigh `answer_weight`, the rest 1.
std::vector<TrainingExample> rare_fact_examples(const Tokenizer& tokenizer, const std::vector<tasks::Sample>& samples,
                                                float answer_weight);

// Trains the tokenizer and the model and writes DIR: config.json, generation_config.json,
// model.safetensors (F32), tokenizer.json, tokenizer_config.json, training.json (settings, losses,
// recall probes).
void train_demo(const std::filesystem::path& out, const DemoSettings& settings);

// Mean next-token loss (nats per token) on the filler of `held_out`'s stories (the facts removed): of
// `model`, and of a bigram model (add-0.01 smoothing) counted on the filler of `bigram_corpus`'s stories.
// The counter-causal signal reads the model's logits, so it should know the language, not only the lookup.
struct FillerLoss {
  double model = 0.0, bigram = 0.0;
  int64_t tokens = 0;  // scored held-out tokens
};
FillerLoss filler_loss(const Model& model, const Tokenizer& tokenizer, const tasks::RareFactSpec& held_out,
                       const tasks::RareFactSpec& bigram_corpus);

// Greedy recall with the full cache on `spec`'s samples: the rare-fact task's mean grade.
double rare_fact_recall(const Model& model, const Tokenizer& tokenizer, const tasks::RareFactSpec& spec);

}  // namespace kvbench
