// Phrase rules (engine/score_transforms.h) on hand-worked examples: smoothing windows truncated at the
// candidate range, the span walk, both composed with the allocator, per-head rows, and bad values.
#include "torch_catch.h"

#include "common/error.h"
#include "engine/budget.h"
#include "engine/score_transforms.h"

using namespace kvbench;

namespace {

std::vector<int64_t> kept(const at::Tensor& scores, int64_t J, int64_t recent, const PhraseRules& rules) {
  const KeepRule rule{/*keep_lowest=*/true, recent, Granularity::Token};
  const auto [begin, end] = candidate_range(scores.size(-1), 0, rule);
  const at::Tensor keep = select_keep(ranking_scores(scores, begin, end, rules, true), scores.size(-1), J, 0, rule);
  const at::Tensor flat = keep.contiguous();
  return {flat.data_ptr<int64_t>(), flat.data_ptr<int64_t>() + flat.numel()};
}

// Scores of 6 entries; with recent 1 the candidates are slots 0..4.
const std::vector<float> kScores = {5, 1, 3, 2, 9, 4};

}  // namespace

TEST_CASE("smoothing averages a centred window of candidates, truncated at the candidate range") {
  const at::Tensor scores = at::tensor(std::vector<double>(kScores.begin(), kScores.end()), at::kDouble);
  const at::Tensor smoothed = smooth_candidates(scores, 1, 5, 3);
  // Slots 1..4 are candidates: windows {1,2}, {1,2,3}, {2,3,4}, {3,4}; slots 0 and 5 untouched.
  const std::vector<double> want = {5, (1 + 3) / 2.0, (1 + 3 + 2) / 3.0, (3 + 2 + 9) / 3.0, (2 + 9) / 2.0, 4};
  for (int64_t i = 0; i < 6; ++i) CHECK(smoothed[i].item<double>() == want[i]);
  // W = 5 over a range of 2 candidates: both become the mean of both.
  const at::Tensor wide = smooth_candidates(scores, 2, 4, 5);
  CHECK(wide[2].item<double>() == 2.5);
  CHECK(wide[3].item<double>() == 2.5);
}

TEST_CASE("the span walk takes each ranked candidate with its followers, once") {
  const at::Tensor scores = at::tensor(std::vector<double>(kScores.begin(), kScores.end()), at::kDouble);
  // Candidates 0..4 lowest first: 1, 3, 2, 0, 4. S = 2: 1 takes {1, 2}; 3 takes {3, 4}; 2 is taken; 0 takes {0}.
  const at::Tensor order = span_walk_order(scores, 0, 5, 2, /*keep_lowest=*/true);
  const std::vector<double> want = {4, 0, 1, 2, 3, 4 /* slot 5: not a candidate, copied */};
  for (int64_t i = 0; i < 6; ++i) CHECK(order[i].item<double>() == want[i]);
  // Keeping the highest: 4 takes {4} (no candidate follows), 0 takes {0, 1}, 2 takes {2, 3}; best = largest.
  const at::Tensor highest = span_walk_order(scores, 0, 5, 2, /*keep_lowest=*/false);
  const std::vector<double> want_highest = {-1, -2, -3, -4, 0, 4};
  for (int64_t i = 0; i < 6; ++i) CHECK(highest[i].item<double>() == want_highest[i]);
}

TEST_CASE("phrase rules change which entries the allocator keeps, never how many") {
  const at::Tensor scores = at::tensor(kScores, at::kFloat);
  // J = 3, recent 1: two candidates by score plus slot 5.
  CHECK(kept(scores, 3, 1, {}) == std::vector<int64_t>{1, 3, 5});          // plain: the two lowest
  CHECK(kept(scores, 3, 1, {1, 2}) == std::vector<int64_t>{1, 2, 5});      // 1 brings 2, the budget is full
  CHECK(kept(scores, 3, 1, {3, 1}) == std::vector<int64_t>{0, 2, 5});      // smoothed: 3 3 2 4.67 5.5, tie → older
  CHECK(kept(scores, 4, 1, {3, 3}) == std::vector<int64_t>{2, 3, 4, 5});   // smoothed, then 2 brings 3 and 4
  // Per-head rows [1, 2, 6] are walked independently.
  const at::Tensor heads = at::stack({scores, scores.flip(0)}).unsqueeze(0);
  const at::Tensor ranked = ranking_scores(heads, 0, 5, {1, 2}, true);
  CHECK(ranked[0][0].narrow(0, 0, 5).equal(span_walk_order(scores.to(at::kDouble), 0, 5, 2, true).narrow(0, 0, 5)));
  CHECK(ranked[0][1].narrow(0, 0, 5).equal(span_walk_order(scores.flip(0).to(at::kDouble), 0, 5, 2, true).narrow(0, 0, 5)));
}

TEST_CASE("without phrase rules the scores pass through untouched") {
  const at::Tensor scores = at::tensor(kScores, at::kFloat);
  CHECK(ranking_scores(scores, 0, 5, {}, true).is_same(scores));
  CHECK(!ranking_scores(at::Tensor(), 0, 5, {3, 2}, true).defined());
}

TEST_CASE("bad phrase rules are refused naming the option") {
  CHECK_THROWS_WITH(validate(PhraseRules{2, 1}), Catch::Contains("--smooth") && Catch::Contains("odd"));
  CHECK_THROWS_WITH(validate(PhraseRules{0, 1}), Catch::Contains("--smooth"));
  CHECK_THROWS_WITH(validate(PhraseRules{1, 0}), Catch::Contains("--keep-span"));
  CHECK_NOTHROW(validate(PhraseRules{7, 4}));
}
