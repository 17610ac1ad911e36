#include "train/demo.h"

#include <ATen/core/grad_mode.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <map>

#include "common/build_info.h"
#include "common/error.h"
#include "model/cpu_threads.h"
#include "engine/generate.h"
#include "model/checkpoint_writer.h"
#include "model/random_model.h"
#include "tasks/rng.h"
#include "tokenizer/bpe_trainer.h"

namespace kvbench {

namespace {

const std::unique_ptr<tasks::Task>& rare_fact_task() {
  static const std::unique_ptr<tasks::Task> task = tasks::make_task("rare-fact");
  return task;
}

// `sample` asking about its fact `fact` only: the task's single-question prompt for that fact.
tasks::Sample single_fact(const tasks::Sample& sample, size_t fact) {
  tasks::Sample one = sample;
  one.record["lockers"] = json::array({sample.record.at("lockers")[fact]});
  one.record["answers"] = json::array({sample.record.at("answers")[fact]});
  return one;
}

void append(TrainingExample& e, const std::vector<int64_t>& ids, float weight) {
  e.ids.insert(e.ids.end(), ids.begin(), ids.end());
  e.weights.insert(e.weights.end(), ids.size(), weight);
}

// Filler length (words) of every story of training step `step`: one length per step, so a batch has
// little padding.
int step_words(const DemoSettings& s, int64_t step) {
  const int longest = step < s.short_steps ? s.short_words : s.long_words;
  tasks::SplitMix64 rng(tasks::fnv1a64(fmt::format("demo-words:{}:{}", s.corpus_seed, step)));
  return s.min_words + static_cast<int>(rng.below(static_cast<uint64_t>(longest - s.min_words + 1)));
}

// Training row `row` of the run (row = step · batch + index): a story with 1..max_facts facts.
tasks::Sample training_sample(const DemoSettings& s, int64_t row, int words) {
  tasks::RareFactSpec spec;
  spec.seed = s.corpus_seed + static_cast<uint64_t>(row);
  spec.samples = 1;
  spec.words = words;
  spec.facts = 1 + static_cast<int>(tasks::SplitMix64(spec.seed).below(static_cast<uint64_t>(s.max_facts)));
  return tasks::generate_rare_fact_samples(spec).front();
}

std::vector<tasks::Sample> step_samples(const DemoSettings& s, int64_t step) {
  std::vector<tasks::Sample> samples;
  const int words = step_words(s, step);
  for (int64_t b = 0; b < s.batch_size; ++b) samples.push_back(training_sample(s, step * s.batch_size + b, words));
  return samples;
}

TrainedBpe demo_tokenizer(const DemoSettings& s) {
  std::vector<std::string> corpus;
  for (int64_t step = 0; static_cast<int64_t>(corpus.size()) < s.tokenizer_stories; ++step)
    for (const auto& sample : step_samples(s, step)) {
      corpus.push_back(rare_fact_task()->prompt(sample).raw + rare_fact_task()->answer_text(sample));
    }
  BpeTrainingOptions options;
  options.max_merges = 2000;  // enough for every word, locker and digit pair of the corpus
  options.split_pattern = kDemoSplit;
  return train_byte_level_bpe(corpus, options);
}

// The recall format rests on lockers, lockers before codes and code digit pairs being single tokens (kDemoSplit).
void require_number_tokens(const Tokenizer& tokenizer) {
  std::vector<std::pair<std::string, size_t>> texts;  // text, its expected token count
  for (int n = 1; n <= 99; ++n) {
    texts.emplace_back(fmt::format(" {}", n), 1);
    texts.emplace_back(fmt::format(" {} is 10", n), 2);  // " N is " then the pair "10"
  }
  for (int n = 0; n <= 99; ++n) texts.emplace_back(fmt::format("{:02d}", n), 1);
  for (const auto& [text, expected] : texts)
    if (const size_t count = tokenizer.encode(text, false).size(); count != expected)
      fail("demo tokenizer: \"{}\" is {} tokens, not {} (too few --tokenizer-stories for the BPE to learn them?)", text,
           count, expected);
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
  c.key_smear = s.key_smear;
  return c;
}

json settings_json(const DemoSettings& s) {
  return {{"seed", s.seed},           {"layers", s.layers},          {"hidden", s.hidden},
          {"heads", s.heads},         {"kv_heads", s.kv_heads},      {"intermediate", s.intermediate}, {"key_smear", s.key_smear},
          {"corpus_seed", s.corpus_seed}, {"max_facts", s.max_facts}, {"min_words", s.min_words},
          {"short_words", s.short_words}, {"long_words", s.long_words}, {"short_steps", s.short_steps},
          {"tokenizer_stories", s.tokenizer_stories}, {"answer_weight", s.answer_weight}, {"steps", s.steps},
          {"batch_size", s.batch_size}, {"peak_lr", s.peak_lr},     {"min_lr", s.min_lr},
          {"warmup_steps", s.warmup_steps}, {"weight_decay", s.weight_decay}, {"clip_norm", s.clip_norm},
          {"probe_every", s.probe_every}, {"probe_samples", s.probe_samples}, {"probe_words", s.probe_words},
          {"probe_seed", s.probe_seed}, {"threads", s.threads}};
}

}  // namespace

std::vector<TrainingExample> rare_fact_examples(const Tokenizer& tokenizer, const std::vector<tasks::Sample>& samples,
                                                float answer_weight) {
  const auto eos = tokenizer.eos_ids();
  std::vector<TrainingExample> examples;
  for (const auto& sample : samples) {
    const std::string& story = sample.inputs.at("text").get_ref<const std::string&>();
    TrainingExample e;
    for (size_t f = 0; f < sample.record.at("answers").size(); ++f) {
      const tasks::Sample one_fact = single_fact(sample, f);
      const std::string prompt = rare_fact_task()->prompt(one_fact).raw;
      if (f == 0) append(e, tokenizer.encode(prompt, true), 1.0f);
      else append(e, tokenizer.encode(prompt.substr(prompt.find(story) + story.size()), false), 1.0f);
      auto answer = tokenizer.encode(rare_fact_task()->answer_text(one_fact), false);
      if (!eos.empty()) answer.push_back(eos.front());
      append(e, answer, answer_weight);
    }
    examples.push_back(std::move(e));
  }
  return examples;
}

void train_demo(const std::filesystem::path& out, const DemoSettings& s) {
  set_cpu_threads(static_cast<int>(s.threads));
  const auto started = std::chrono::steady_clock::now();
  const TrainedBpe bpe = demo_tokenizer(s);
  save_tokenizer(out, bpe);
  const Tokenizer tokenizer = Tokenizer::load(out);
  require_number_tokens(tokenizer);
  spdlog::info("demo tokenizer: vocabulary {} tokens", bpe.vocab_size);

  const ModelConfig config = demo_config(s, bpe.vocab_size);
  ModelWeights weights = random_model(config, s.seed, at::kCPU, at::kFloat).weights();
  LmTrainingOptions options;
  options.steps = s.steps;
  options.batch_size = s.batch_size;
  options.schedule = {s.peak_lr, s.min_lr, s.warmup_steps, s.steps};
  options.adamw.weight_decay = s.weight_decay;
  options.clip_norm = s.clip_norm;
  options.log_every = 50;
  const BatchSource batches = [&](int64_t step) {
    return rare_fact_examples(tokenizer, step_samples(s, step), s.answer_weight);
  };
  tasks::RareFactSpec probe;
  probe.seed = s.probe_seed;
  probe.samples = s.probe_samples;
  probe.words = s.probe_words;
  json probes = json::array();
  const StepHook probe_recall = [&](int64_t step, const Model& model) {
    if (s.probe_every <= 0 || ((step + 1) % s.probe_every != 0 && step + 1 != s.steps)) return;
    const double recall = rare_fact_recall(model, tokenizer, probe);
    probes.push_back({{"step", step + 1}, {"recall", recall}});
    spdlog::info("step {}: held-out recall {:.3f} ({} stories of {} words, seed {})", step + 1, recall, probe.samples,
                 probe.words, probe.seed);
  };
  const std::vector<double> losses = train_language_model(config, weights, batches, options, probe_recall);
  save_model(out, config, weights, at::kFloat, {bpe.bos_id, bpe.eos_id});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  json every = json::array();
  for (size_t i = 0; i < losses.size(); i += 50) every.push_back(losses[i]);
  write_json_file(out / "training.json", {{"settings", settings_json(s)},
                                          {"final_loss", losses.back()},
                                          {"losses_every_50", every},
                                          {"recall_probes", probes},
                                          {"seconds", seconds},
                                          {"kvbench_commit", git_commit()}});
  spdlog::info("demo model written to {} ({:.0f} s)", out.string(), seconds);
}

namespace {

// The story of `sample` without its fact sentences (and the space that joined each to its neighbour).
std::string filler_text(const tasks::Sample& sample) {
  std::string text = sample.inputs.at("text").get<std::string>();
  for (const auto& fact : rare_fact_task()->key_texts(sample)) {
    const size_t at = text.find(fact);
    if (at == std::string::npos) fail("sample {}: fact \"{}\" not in its story", sample.id, fact);
    const bool space_after = at + fact.size() < text.size() && text[at + fact.size()] == ' ';
    text.erase(at, fact.size() + (space_after ? 1 : 0));
  }
  return text;
}

std::vector<std::vector<int64_t>> filler_tokens(const Tokenizer& tokenizer, const tasks::RareFactSpec& spec) {
  std::vector<std::vector<int64_t>> sequences;
  for (const auto& sample : tasks::generate_rare_fact_samples(spec))
    sequences.push_back(tokenizer.encode(filler_text(sample), true));
  return sequences;
}

}  // namespace

FillerLoss filler_loss(const Model& model, const Tokenizer& tokenizer, const tasks::RareFactSpec& held_out,
                       const tasks::RareFactSpec& bigram_corpus) {
  const double alpha = 0.01;
  const auto vocab = static_cast<double>(tokenizer.vocab_size());
  std::map<std::pair<int64_t, int64_t>, double> pair_counts;
  std::map<int64_t, double> context_counts;
  for (const auto& ids : filler_tokens(tokenizer, bigram_corpus))
    for (size_t t = 1; t < ids.size(); ++t) {
      pair_counts[{ids[t - 1], ids[t]}] += 1.0;
      context_counts[ids[t - 1]] += 1.0;
    }
  at::NoGradGuard no_grad;
  FillerLoss loss;
  for (const auto& ids : filler_tokens(tokenizer, held_out)) {
    const auto scored = static_cast<int64_t>(ids.size()) - 1;
    const TrainingExample example{ids, {}};
    loss.model += language_model_loss(model, make_batch({&example})).item<double>() * static_cast<double>(scored);
    for (size_t t = 1; t < ids.size(); ++t) {
      const auto pair = pair_counts.find({ids[t - 1], ids[t]});
      const auto context = context_counts.find(ids[t - 1]);
      const double count = pair == pair_counts.end() ? 0.0 : pair->second;
      const double total = context == context_counts.end() ? 0.0 : context->second;
      loss.bigram -= std::log((count + alpha) / (total + alpha * vocab));
    }
    loss.tokens += scored;
  }
  loss.model /= static_cast<double>(loss.tokens);
  loss.bigram /= static_cast<double>(loss.tokens);
  return loss;
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
