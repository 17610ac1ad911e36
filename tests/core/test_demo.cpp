// The demo model: its training is bit-for-bit reproducible, its training sequences weight the
// answer, and the committed checkpoint (models/kvbench-demo) loads and answers in the trained form.
#include "torch_catch.h"

#include <ATen/Parallel.h>

#include <fmt/format.h>

#include <regex>

#include "common/json_file.h"
#include "engine/cpu_threads.h"
#include "model_test_util.h"
#include "test_support.h"
#include "train/demo.h"

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

// Returns from the test (with a warning) when the committed checkpoint is absent (e.g. a trimmed checkout).
#define REQUIRE_DEMO_MODEL()                                          \
  do {                                                                \
    if (!std::filesystem::exists(demo_dir() / "model.safetensors")) { \
      WARN("skipped: models/kvbench-demo not present");               \
      return;                                                         \
    }                                                                 \
  } while (0)

TEST_CASE("demo training twice with the same seed gives bit-identical files", "[demo][train]") {
  const auto base = std::filesystem::temp_directory_path() / ("kvbench_demo_" + std::to_string(::getpid()));
  const int threads = at::get_num_threads();
  train_demo(base / "a", tiny_demo());
  train_demo(base / "b", tiny_demo());
  DemoSettings other = tiny_demo();
  other.seed = 1;
  train_demo(base / "c", other);
  set_cpu_threads(threads);
  for (const char* file : {"model.safetensors", "tokenizer.json", "config.json"})
    CHECK(read_text_file(base / "a" / file) == read_text_file(base / "b" / file));
  CHECK(read_text_file(base / "a" / "model.safetensors") != read_text_file(base / "c" / "model.safetensors"));
  const Model model = Model::load(base / "a");
  CHECK(model.config().num_layers == 2);
  CHECK(model.config().tie_word_embeddings);
  std::filesystem::remove_all(base);
}

TEST_CASE("rare-fact training sequences: BOS + prompt + restated fact + EOS, answer weighted", "[demo]") {
  REQUIRE_DEMO_MODEL();
  const Tokenizer tokenizer = Tokenizer::load(demo_dir());
  tasks::RareFactSpec spec;
  spec.samples = 2;
  spec.words = 40;
  const auto samples = tasks::generate_rare_fact_samples(spec);
  const auto examples = rare_fact_examples(tokenizer, samples, 3.0f);
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& e = examples[i];
    const std::string answer_text = fmt::format(" The code for locker {} is {}.",
                                                samples[i].record.at("lockers")[0].get<int>(),
                                                samples[i].record.at("answers")[0].get<std::string>());
    CHECK(e.ids.front() == *tokenizer.bos_id());
    CHECK(e.ids.back() == tokenizer.eos_ids().front());
    const std::string text = tokenizer.decode(e.ids);
    const std::string ending = "\n\nAnswer:" + answer_text;
    CHECK(text.size() > ending.size());
    CHECK(text.substr(text.size() - ending.size()) == ending);
    // The answer's tokens and EOS carry the answer weight, nothing else does.
    const auto answer = static_cast<std::ptrdiff_t>(tokenizer.encode(answer_text, false).size()) + 1;
    CHECK(answer >= 12);  // 4 code digits, at least 1 locker digit: single tokens
    CHECK(std::count(e.weights.begin(), e.weights.end(), 3.0f) == answer);
    CHECK(std::all_of(e.weights.end() - answer, e.weights.end(), [](float w) { return w == 3.0f; }));
  }
}

TEST_CASE("the committed demo model answers held-out questions in the trained form", "[demo]") {
  REQUIRE_DEMO_MODEL();
  const Model model = Model::load(demo_dir());
  const Tokenizer tokenizer = Tokenizer::load(demo_dir());
  tasks::RareFactSpec spec;  // seed 0: stories the model was never trained on
  spec.samples = 3;
  spec.words = 100;
  // It has learned the answer's form (README: not yet the recall itself, whose accuracy is 0).
  const std::regex form(R"(^ The code for locker \d+ is \d{4}\.)");
  for (const auto& sample : tasks::generate_rare_fact_samples(spec)) {
    const auto prompt = tokenizer.encode(rare_fact_text(sample).prompt, true);
    const auto answer = tokenizer.decode(greedy(model, prompt, 16, tokenizer.eos_ids().front()));
    INFO(answer);
    CHECK(std::regex_search(answer, form));
  }
}
