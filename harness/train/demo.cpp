#include "train/demo.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/build_info.h"
#include "engine/cpu_threads.h"
#include "engine/generate.h"
#include "model/checkpoint_writer.h"
#include "model/random_model.h"
#include "tokenizer/bpe_trainer.h"

namespace kvbench {

namespace {

const std::unique_ptr<tasks::Task>& rare_fact_task() {
  static const std::unique_ptr<tasks::Task> task = tasks::make_task("rare-fact");
  return task;
}

std::vector<tasks::Sample> training_samples(const DemoSettings& s) {
  std::vector<tasks::Sample> samples;
  for (size_t i = 0; i < s.words.size(); ++i) {
    tasks::RareFactSpec spec;
    spec.seed = s.corpus_seed + i;
    spec.samples = s.samples_per_length;
    spec.words = s.words[i];
    for (auto& sample : tasks::generate_rare_fact_samples(spec)) samples.push_back(std::move(sample));
  }
  return samples;
}

ModelConfig demo_config(const DemoSettings& s, int64_t vocab_size) {
  ModelConfig c;
  c.family = ModelFamily::Llama;
  c.model_type = "llama";
  c.hidden_size = s.hidden;
  c.intermediate_size = s.intermediate;
  c.num_layers = s.layers;
  c.num_heads = s.heads;
  c.num_kv_heads = s.kv_heads;
  c.head_dim = s.hidden / s.heads;
  c.vocab_size = vocab_size;
  c.max_position_embeddings = 4096;
  c.rms_norm_eps = 1e-5;
  c.tie_word_embeddings = true;
  return c;
}

json settings_json(const DemoSettings& s) {
  return {{"seed", s.seed},           {"layers", s.layers},          {"hidden", s.hidden},
          {"heads", s.heads},         {"kv_heads", s.kv_heads},      {"intermediate", s.intermediate},
          {"corpus_seed", s.corpus_seed}, {"samples_per_length", s.samples_per_length}, {"words", s.words},
          {"answer_weight", s.answer_weight}, {"steps", s.steps},    {"batch_size", s.batch_size},
          {"peak_lr", s.peak_lr},     {"min_lr", s.min_lr},          {"warmup_steps", s.warmup_steps},
          {"weight_decay", s.weight_decay}, {"clip_norm", s.clip_norm}, {"threads", s.threads}};
}

}  // namespace

PromptAndAnswer rare_fact_text(const tasks::Sample& sample) {
  const auto& lockers = sample.record.at("lockers");
  const auto& codes = sample.record.at("answers");
  std::string answer;
  for (size_t f = 0; f < codes.size(); ++f)
    answer += fmt::format(" The code for locker {} is {}.", lockers[f].get<int>(), codes[f].get<std::string>());
  return {rare_fact_task()->prompt(sample).raw, answer};
}

std::vector<TrainingExample> rare_fact_examples(const Tokenizer& tokenizer, const std::vector<tasks::Sample>& samples,
                                                float answer_weight) {
  const auto eos = tokenizer.eos_ids();
  std::vector<TrainingExample> examples;
  for (const auto& sample : samples) {
    const PromptAndAnswer text = rare_fact_text(sample);
    TrainingExample e;
    e.ids = tokenizer.encode(text.prompt, true);
    e.weights.assign(e.ids.size(), 1.0f);
    auto answer = tokenizer.encode(text.answer, false);
    if (!eos.empty()) answer.push_back(eos.front());
    e.ids.insert(e.ids.end(), answer.begin(), answer.end());
    e.weights.insert(e.weights.end(), answer.size(), answer_weight);
    examples.push_back(std::move(e));
  }
  return examples;
}

void train_demo(const std::filesystem::path& out, const DemoSettings& s) {
  set_cpu_threads(static_cast<int>(s.threads));
  const auto started = std::chrono::steady_clock::now();
  const std::vector<tasks::Sample> samples = training_samples(s);
  std::vector<std::string> corpus;
  for (const auto& sample : samples) {
    const PromptAndAnswer text = rare_fact_text(sample);
    corpus.push_back(text.prompt + text.answer);
  }
  const TrainedBpe bpe = train_byte_level_bpe(corpus);
  save_tokenizer(out, bpe);
  const Tokenizer tokenizer = Tokenizer::load(out);
  const std::vector<TrainingExample> examples = rare_fact_examples(tokenizer, samples, s.answer_weight);
  spdlog::info("demo corpus: {} sequences, vocabulary {} tokens", examples.size(), bpe.vocab_size);

  const ModelConfig config = demo_config(s, bpe.vocab_size);
  ModelWeights weights = random_model(config, s.seed, at::kCPU, at::kFloat).weights();
  LmTrainingOptions options;
  options.seed = s.seed;
  options.steps = s.steps;
  options.batch_size = s.batch_size;
  options.schedule = {s.peak_lr, s.min_lr, s.warmup_steps, s.steps};
  options.adamw.weight_decay = s.weight_decay;
  options.clip_norm = s.clip_norm;
  options.log_every = 50;
  const std::vector<double> losses = train_language_model(config, weights, examples, options);
  save_model(out, config, weights, at::kFloat, {bpe.bos_id, bpe.eos_id});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  write_json_file(out / "training.json", {{"settings", settings_json(s)},
                                          {"final_loss", losses.back()},
                                          {"losses_every_50", [&] {
                                             json every = json::array();
                                             for (size_t i = 0; i < losses.size(); i += 50) every.push_back(losses[i]);
                                             return every;
                                           }()},
                                          {"seconds", seconds},
                                          {"kvbench_commit", git_commit()}});
  spdlog::info("demo model written to {} ({:.0f} s)", out.string(), seconds);
}

double rare_fact_recall(const Model& model, const Tokenizer& tokenizer, const tasks::RareFactSpec& spec) {
  const auto policy = make_policy("full");
  GenerationSettings settings;
  settings.budget.h = std::numeric_limits<int32_t>::max();
  settings.max_new_tokens = 16;
  settings.eos_ids = tokenizer.eos_ids();
  double total = 0.0;
  const auto samples = tasks::generate_rare_fact_samples(spec);
  for (const auto& sample : samples) {
    const auto prompt = tokenizer.encode(rare_fact_task()->prompt(sample).raw, true);
    const GenerationResult result = generate(model, *policy, prompt, settings);
    total += rare_fact_task()->grade(sample, tokenizer.decode(result.rollouts[0].generated)).score;
  }
  return total / static_cast<double>(samples.size());
}

}  // namespace kvbench
