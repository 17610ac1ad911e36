// KVpop scorers trained offline and scored against the future-attention oracle on held-out stories:
// the learned scorers (MLP and the stateful mLSTM) must beat the untrained fallback (accumulated attention) on real pretrained
// models, and training must help on the demo model (where the fallback stays ahead: its README).
#include "torch_catch.h"

#include "model_test_util.h"
#include "test_support.h"
#include "train/demo.h"
#include "train/kvpop_training.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

const KvpopBudget kBudget = {4, 16, 16};  // s, w, k

// Full-cache analyses of rare-fact stories (generator `seed`): features, targets and attention.
std::vector<KvpopSequence> analysed_stories(const Model& model, const Tokenizer& tokenizer, uint64_t seed, int samples,
                                            int words) {
  tasks::RareFactSpec spec;
  spec.seed = seed;
  spec.samples = samples;
  spec.words = words;
  FutureMassSpec mass;
  mass.window = kBudget.window;
  std::vector<KvpopSequence> out;
  for (const auto& e : rare_fact_examples(tokenizer, tasks::generate_rare_fact_samples(spec), 1.0f))
    out.push_back(analyse_sequence(model, e.ids, mass, true));
  return out;
}

ScorerTrainingOptions mlp_training(int64_t steps, ScorerKind kind = ScorerKind::Mlp) {
  ScorerTrainingOptions options;
  options.shape.kind = kind;
  options.shape.delay = kBudget.window;  // mLSTM: read when the token leaves the window (train-scorer's default)
  options.shape.hidden = 16;
  options.budget = kBudget;
  options.steps = steps;
  options.sequences_per_step = 2;
  return options;
}

// On a real pretrained model: the learned scorers (MLP, then the stateful mLSTM) beat the fallback's oracle
// recall on held-out stories, and the fallback beats recency.
void check_learned_scorers_beat_fallback(const std::string& name) {
  const std::string relative = "models/" + name;
  KVBENCH_REQUIRE_SHARED(relative);
  const Model model = Model::load(shared_dir() / relative);
  const Tokenizer tokenizer = Tokenizer::load(shared_dir() / relative);
  // Held out: other generator seeds, so other names, places and facts in other places.
  const auto train = analysed_stories(model, tokenizer, 7, 16, 150);
  const auto held_out = analysed_stories(model, tokenizer, 8, 6, 150);
  const KvpopScorer scorer = train_kvpop_scorer(train, mlp_training(200));
  const RecallReport report = oracle_recall(held_out, &scorer, kBudget, 4);
  INFO(name << ": learned " << report.learned << ", fallback " << report.fallback << ", recency " << report.recency
            << " (" << report.decisions << " decisions)");
  CHECK(report.learned > report.fallback + 0.1);
  CHECK(report.fallback > report.recency);
  // The stateful mLSTM scorer, same loss and data (its scores read only tokens up to each readout).
  const KvpopScorer mlstm = train_kvpop_scorer(train, mlp_training(200, ScorerKind::Mlstm));
  const RecallReport stateful = oracle_recall(held_out, &mlstm, kBudget, 4);
  INFO(name << ": mLSTM learned " << stateful.learned);
  CHECK(stateful.learned > stateful.fallback + 0.1);
}

}  // namespace

// One test case per model, so that the test runner can train them side by side.
TEST_CASE("on stories260K the learned KVpop scorers beat the untrained fallback's oracle recall", "[kvpop][scorer]") {
  check_learned_scorers_beat_fallback("stories260K");
}

TEST_CASE("on tinystories-656k the learned KVpop scorers beat the untrained fallback's oracle recall",
          "[kvpop][scorer]") {
  check_learned_scorers_beat_fallback("tinystories-656k");
}

TEST_CASE("on the demo model the KVpop scorer learns: oracle recall above its untrained start", "[demo][kvpop]") {
  const auto demo = source_dir() / "models" / "kvbench-demo";
  if (!std::filesystem::exists(demo / "model.safetensors")) {
    WARN("skipped: models/kvbench-demo not present");
    return;
  }
  const Model model = Model::load(demo);
  const Tokenizer tokenizer = Tokenizer::load(demo);
  const auto train = analysed_stories(model, tokenizer, 7, 12, 120), held_out = analysed_stories(model, tokenizer, 8, 4, 120);
  const KvpopScorer scorer = train_kvpop_scorer(train, mlp_training(150));
  const KvpopScorer untrained = train_kvpop_scorer(train, mlp_training(0));
  const RecallReport report = oracle_recall(held_out, &scorer, kBudget, 4);
  const double start = oracle_recall(held_out, &untrained, kBudget, 4).learned;
  INFO("learned " << report.learned << ", untrained " << start << ", fallback " << report.fallback << ", recency "
                  << report.recency);
  CHECK(report.learned > start + 0.1);
  CHECK(report.learned > report.recency + 0.2);
  CHECK(report.fallback > report.recency);
}
