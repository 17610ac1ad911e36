// Key-passage retention: the token span of a fact is the smallest one whose text contains it, on two
// different tokenizers; retention counts what the last prefill refresh kept plus what came after it.
#include "torch_catch.h"

#include <cmath>

#include "run/key_retention.h"
#include "tasks/rare_fact.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

std::vector<int64_t> slice(const std::vector<int64_t>& ids, int64_t first, int64_t last) {
  return {ids.begin() + first, ids.begin() + last + 1};
}

RefreshRecord prefill_refresh(int64_t processed, at::Tensor kept) {
  RefreshRecord r;
  r.phase = "prefill";
  r.processed = processed;
  r.kept_positions = std::move(kept);
  return r;
}

}  // namespace

TEST_CASE("key positions: the smallest token span whose text holds each fact", "[key-retention]") {
  std::vector<std::filesystem::path> models = {source_dir() / "models/kvbench-demo"};
  if (std::filesystem::exists(shared_dir() / "models/stories260K")) models.push_back(shared_dir() / "models/stories260K");
  tasks::RareFactSpec spec;
  spec.samples = 3;
  spec.words = 80;
  spec.facts = 2;
  const auto task = tasks::make_task("rare-fact");
  for (const auto& dir : models) {
    const Tokenizer tokenizer = Tokenizer::load(dir);
    for (const auto& sample : tasks::generate_rare_fact_samples(spec)) {
      const auto prompt = tokenizer.encode(task->prompt(sample).raw, true);
      const auto facts = task->key_texts(sample);
      REQUIRE(facts.size() == 2);
      for (const auto& fact : facts) {
        INFO(dir.filename().string() << " " << sample.id << ": " << fact);
        const auto positions = key_positions(prompt, tokenizer, {fact});
        REQUIRE(!positions.empty());
        const int64_t first = positions.front(), last = positions.back();
        CHECK(last - first + 1 == static_cast<int64_t>(positions.size()));  // contiguous
        CHECK(tokenizer.decode(slice(prompt, first, last)).find(fact) != std::string::npos);
        CHECK(tokenizer.decode(slice(prompt, first + 1, last)).find(fact) == std::string::npos);
        CHECK(tokenizer.decode(slice(prompt, first, last - 1)).find(fact) == std::string::npos);
      }
      CHECK(key_positions(prompt, tokenizer, {"The code for locker 100 is"}).empty());  // lockers are 1..99
    }
  }
}

TEST_CASE("key retention: kept by the last prefill refresh, or fed after it", "[key-retention]") {
  const std::vector<int64_t> keys = {3, 4, 5, 21};
  CHECK(std::isnan(key_retention(GenerationResult{}, 0, {})));
  CHECK(key_retention(GenerationResult{}, 0, keys) == 1.0);  // nothing evicted

  GenerationResult result;
  result.refreshes.push_back(prefill_refresh(10, at::tensor({0, 1, 2, 3, 4, 5}, at::kLong).unsqueeze(0)));
  result.refreshes.push_back(prefill_refresh(20, at::tensor({0, 1, 4, 17, 18}, at::kLong).unsqueeze(0)));
  RefreshRecord decode = prefill_refresh(30, at::tensor({0, 1, 0, 1}, at::kLong).view({2, 2}));  // a decode refresh: ignored
  decode.phase = "decode";
  result.refreshes.push_back(decode);
  CHECK(key_retention(result, 1, keys) == 0.5);  // 4 kept, 21 fed after; 3 and 5 evicted

  // Per KV head [B, L, KV, M]: the mean over layers and heads.
  result.refreshes[1].kept_positions =
      at::tensor({4, 5, 9, 3, 4, 5, 0, 1, 2, 3, 4, 8}, at::kLong).view({1, 2, 2, 3});
  CHECK(key_retention(result, 0, keys) == Approx((3.0 + 4.0 + 1.0 + 3.0) / 16.0));  // 21 is held everywhere
}
