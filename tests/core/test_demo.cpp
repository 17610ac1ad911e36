// The demo model: its training is bit-for-bit reproducible, its training sequences query every fact in
// the task's own form with the answer weighted, its tokenizer keeps keys and values apart, and the
// committed checkpoint (models/kvbench-demo) recalls held-out codes with the full cache and knows the
// filler language better than a bigram model.
#include "torch_catch.h"

#include <ATen/Parallel.h>

#include <fmt/format.h>

#include "common/json_file.h"
#include "model/cpu_threads.h"
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
  s.short_words = 30;
  s.long_words = 50;
  s.short_steps = 2;
  s.steps = 4;
  s.batch_size = 3;
  s.warmup_steps = 2;
  s.probe_every = 2;
  s.probe_samples = 2;
  s.probe_words = 30;
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
  const auto base = kvbench::testing::scratch_path("demo");
  const int threads = at::get_num_threads();
  train_demo(base / "a", tiny_demo());
  train_demo(base / "b", tiny_demo());
  DemoSettings other = tiny_demo();
  other.seed = 1;
  train_demo(base / "c", other);
  set_cpu_threads(threads);
  for (const char* file : {"model.safetensors", "tokenizer.json", "config.json"})
    CHECK(read_text_file(base / "a" / file) == read_text_file(base / "b" / file));
  const json probes = read_json_file(base / "a" / "training.json").at("recall_probes");
  REQUIRE(probes.size() == 2);  // steps 2 and 4
  CHECK(probes[1].at("step") == 4);
  CHECK(read_text_file(base / "a" / "model.safetensors") != read_text_file(base / "c" / "model.safetensors"));
  const Model model = Model::load(base / "a");
  CHECK(model.config().num_layers == 2);
  CHECK(model.config().tie_word_embeddings);
  std::filesystem::remove_all(base);
}

TEST_CASE("demo tokenizer: lockers and code digit pairs are single tokens, disjoint, and decode back", "[demo]") {
  REQUIRE_DEMO_MODEL();
  const Tokenizer tokenizer = Tokenizer::load(demo_dir());
  const auto ids = tokenizer.encode("The code for locker 7 is 0421. What is the code for locker 17?", false);
  std::vector<std::string> pieces;
  for (const auto id : ids) pieces.push_back(tokenizer.decode({id}));
  CHECK(pieces == std::vector<std::string>{"The", " code", " for", " locker", " 7 is ", "04", "21", ".", " What",
                                           " is", " the", " code", " for", " locker", " 17", "?"});
  CHECK(tokenizer.encode(" 42", false) != tokenizer.encode("42", false));  // locker 42 vs the digit pair 42
}

TEST_CASE("rare-fact training sequences: every fact queried in the task's form, answers weighted", "[demo]") {
  REQUIRE_DEMO_MODEL();
  const Tokenizer tokenizer = Tokenizer::load(demo_dir());
  tasks::RareFactSpec spec;
  spec.samples = 2;
  spec.words = 40;
  spec.facts = 3;
  const auto samples = tasks::generate_rare_fact_samples(spec);
  const auto examples = rare_fact_examples(tokenizer, samples, 3.0f);
  const auto task = tasks::make_task("rare-fact");
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& e = examples[i];
    REQUIRE(e.weights.size() == e.ids.size());
    CHECK(e.ids.front() == *tokenizer.bos_id());
    const auto eos = tokenizer.eos_ids().front();
    // Three answers, each ended by EOS; the text up to the first is the task's prompt for fact 0 alone.
    std::vector<size_t> ends;
    for (size_t t = 0; t < e.ids.size(); ++t)
      if (e.ids[t] == eos) ends.push_back(t);
    REQUIRE(ends.size() == 3);
    CHECK(ends.back() + 1 == e.ids.size());
    const std::string text = tokenizer.decode(e.ids);
    const auto& lockers = samples[i].record.at("lockers");
    const auto& codes = samples[i].record.at("answers");
    size_t answer_tokens = 0;
    for (size_t f = 0; f < 3; ++f) {
      const std::string qa = fmt::format("Question: What is the code for locker {}?\n\nAnswer: The code for locker {} is {}.",
                                         lockers[f].get<int>(), lockers[f].get<int>(), codes[f].get<std::string>());
      INFO(text);
      CHECK(text.find(qa) != std::string::npos);
      answer_tokens += tokenizer.encode(fmt::format(" The code for locker {} is {}.", lockers[f].get<int>(),
                                                    codes[f].get<std::string>()), false).size() + 1;
    }
    tasks::Sample first = samples[i];
    first.record["lockers"] = json::array({lockers[0]});
    first.record["answers"] = json::array({codes[0]});
    const auto prompt = tokenizer.encode(task->prompt(first).raw, true);
    CHECK(std::equal(prompt.begin(), prompt.end(), e.ids.begin()));
    // The answers' tokens and EOS carry the answer weight, nothing else does.
    CHECK(static_cast<size_t>(std::count(e.weights.begin(), e.weights.end(), 3.0f)) == answer_tokens);
    CHECK(std::all_of(e.weights.begin(), e.weights.begin() + prompt.size(), [](float w) { return w == 1.0f; }));
  }
}

TEST_CASE("the committed demo model recalls held-out codes with the full cache, in every dtype", "[demo]") {
  // Stories of seed 3: neither trained on (seeds from 1000003) nor probed during training (seed 1). The
  // grade is the task's own: the first 4-digit number of the answer must be the code. In 16-bit on the
  // CPU too: its key smear's gate was a float16 sigmoid, which libtorch 1.13 lacks there (every float16
  // run of the demo threw), and rounding must not cost the recall.
  REQUIRE_DEMO_MODEL();
  const Tokenizer tokenizer = Tokenizer::load(demo_dir());
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf}) {
    const Model model = Model::load(demo_dir(), at::kCPU, dtype);
    for (const int words : {150, 300}) {
      tasks::RareFactSpec spec;
      spec.seed = 3;
      spec.samples = 20;
      spec.words = words;
      const double recall = rare_fact_recall(model, tokenizer, spec);
      INFO(dtype << ", " << words << "-word stories: recall " << recall);
      CHECK(recall >= 0.9);
    }
  }
}

TEST_CASE("the committed demo model predicts held-out filler better than a bigram model", "[demo]") {
  REQUIRE_DEMO_MODEL();
  const Model model = Model::load(demo_dir());
  const Tokenizer tokenizer = Tokenizer::load(demo_dir());
  tasks::RareFactSpec held_out, corpus;
  held_out.seed = 3;
  held_out.samples = 10;
  held_out.words = 150;
  corpus.seed = 1000003;  // a training seed
  corpus.samples = 300;
  corpus.words = 150;
  const FillerLoss loss = filler_loss(model, tokenizer, held_out, corpus);
  INFO("model " << loss.model << ", bigram " << loss.bigram);
  CHECK(loss.tokens > 1000);
  CHECK(loss.model < 0.9 * loss.bigram);
}
