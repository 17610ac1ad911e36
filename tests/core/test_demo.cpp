// The demo model: its training is bit-for-bit reproducible, its training sequences weight the
// answer, and the committed checkpoint (models/kvbench-demo) loads and recalls held-out facts.
#include "torch_catch.h"

#include <ATen/Parallel.h>

#include "common/json_file.h"
#include "test_support.h"
#include "train/demo.h"
#include "train/kvpop_training.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

DemoSettings tiny_demo() {
  DemoSettings s;
  s.layers = 2;
  s.hidden = 32;
  s.heads = 4;
  s.kv_heads = 2;
  s.intermediate = 48;
  s.samples_per_length = 6;
  s.words = {30, 50};
  s.steps = 4;
  s.batch_size = 3;
  s.warmup_steps = 2;
  s.threads = 1;
  return s;
}

std::filesystem::path demo_dir() { return source_dir() / "models" / "kvbench-demo"; }

}  // namespace

TEST_CASE("demo training twice with the same seed gives bit-identical files", "[demo][train]") {
  const auto base = std::filesystem::temp_directory_path() / ("kvbench_demo_" + std::to_string(::getpid()));
  const int threads = at::get_num_threads();
  train_demo(base / "a", tiny_demo());
  train_demo(base / "b", tiny_demo());
  DemoSettings other = tiny_demo();
  other.seed = 1;
  train_demo(base / "c", other);
  at::set_num_threads(threads);
  for (const char* file : {"model.safetensors", "tokenizer.json", "config.json"})
    CHECK(read_text_file(base / "a" / file) == read_text_file(base / "b" / file));
  CHECK(read_text_file(base / "a" / "model.safetensors") != read_text_file(base / "c" / "model.safetensors"));
  const Model model = Model::load(base / "a");
  CHECK(model.config().num_layers == 2);
  CHECK(model.config().tie_word_embeddings);
  std::filesystem::remove_all(base);
}

TEST_CASE("rare-fact training sequences: BOS + prompt + answer + EOS, answer weighted", "[demo]") {
  if (!std::filesystem::exists(demo_dir() / "tokenizer.json")) {
    WARN("skipped: models/kvbench-demo not present");
    return;
  }
  const Tokenizer tokenizer = Tokenizer::load(demo_dir());
  tasks::RareFactSpec spec;
  spec.samples = 2;
  spec.words = 40;
  const auto samples = tasks::generate_rare_fact_samples(spec);
  const auto examples = rare_fact_examples(tokenizer, samples, 3.0f);
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& e = examples[i];
    const std::string code = samples[i].record.at("answers")[0].get<std::string>();
    CHECK(e.ids.front() == *tokenizer.bos_id());
    CHECK(e.ids.back() == tokenizer.eos_ids().front());
    const std::string text = tokenizer.decode(e.ids);
    CHECK(text.size() > code.size() + 8);
    CHECK(text.substr(text.size() - code.size() - 8) == "Answer: " + code);
    // The answer's tokens and EOS carry the answer weight, nothing else does.
    const auto answer = static_cast<std::ptrdiff_t>(tokenizer.encode(" " + code, false).size()) + 1;
    CHECK(answer >= 4);  // digits are single tokens
    CHECK(std::count(e.weights.begin(), e.weights.end(), 3.0f) == answer);
    CHECK(std::all_of(e.weights.end() - answer, e.weights.end(), [](float w) { return w == 3.0f; }));
  }
}

TEST_CASE("the committed demo model recalls held-out facts with the full cache", "[demo]") {
  if (!std::filesystem::exists(demo_dir() / "model.safetensors")) {
    WARN("skipped: models/kvbench-demo not present");
    return;
  }
  const Model model = Model::load(demo_dir());
  const Tokenizer tokenizer = Tokenizer::load(demo_dir());
  tasks::RareFactSpec spec;  // seed 0: stories the model was never trained on
  spec.samples = 10;
  spec.words = 150;
  CHECK(rare_fact_recall(model, tokenizer, spec) >= 0.8);
}
