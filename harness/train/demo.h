// The project's own demo model: a small Llama trained from scratch on the rare-fact task's
// generator (filler stories with one fact "The code for locker N is XXXX." and the question about
// it, followed by the answer), with a byte-level BPE tokenizer trained on the same corpus.
// `kvbench train-demo` runs it; models/kvbench-demo/ holds the committed result.
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

struct DemoSettings {
  uint64_t seed = 0;               // weight init and data order
  // Model (Llama architecture, tied embeddings).
  int64_t layers = 4, hidden = 128, heads = 4, kv_heads = 2, intermediate = 256;
  // Corpus: rare-fact samples with filler lengths cycling through `words` (one fact each). The
  // generator seed is far from the task's evaluation seeds (0, 1, ...), so no test story is trained on.
  uint64_t corpus_seed = 1000003;
  int samples_per_length = 1000;
  std::vector<int> words = {20, 40, 80, 120, 160};
  float answer_weight = 5.0f;      // loss weight of the answer tokens (the recall the demo is about)
  // Optimisation.
  int64_t steps = 2000, batch_size = 8;
  double peak_lr = 2e-3, min_lr = 1e-4;
  int64_t warmup_steps = 100;
  double weight_decay = 0.1, clip_norm = 1.0;
  // Intra-op threads, part of the determinism conditions. One is also the fastest here: the
  // matrices are small, and more threads mostly spin.
  int64_t threads = 1;
};

// The rare-fact task's raw prompt for `sample` and the answer the model should continue with: the fact
// restated (" The code for locker 17 is 4821."), which the task's grader reads as the code. Restating
// turns recall into plain induction (match "locker 17 is", copy what followed), which a small model
// learns in minutes; after a bare " 4821" it had not learned the lookup in 1500 steps (recall 0).
struct PromptAndAnswer {
  std::string prompt, answer;
};
PromptAndAnswer rare_fact_text(const tasks::Sample& sample);

// Tokenized training sequences: BOS + prompt + answer + EOS, answer tokens (and EOS) weighted.
std::vector<TrainingExample> rare_fact_examples(const Tokenizer& tokenizer, const std::vector<tasks::Sample>& samples,
                                                float answer_weight);

// Trains the tokenizer and the model and writes DIR: config.json, generation_config.json,
// model.safetensors (F32), tokenizer.json, tokenizer_config.json, training.json (settings, losses).
void train_demo(const std::filesystem::path& out, const DemoSettings& settings);

// Greedy recall with the full cache on `spec`'s samples: the rare-fact task's mean grade.
double rare_fact_recall(const Model& model, const Tokenizer& tokenizer, const tasks::RareFactSpec& spec);

}  // namespace kvbench
