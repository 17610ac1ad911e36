// After dropping an arbitrary subset of cache entries, the next steps must equal an independent
// computation over the surviving entries: ../shared/tools/ref_decoder.py doing the same compaction.
#include "torch_catch.h"

#include <random>

#include "model_test_util.h"
#include "python_oracle.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

struct Scenario {
  std::vector<int64_t> prefix, next;  // prefix fed in chunks of 7, then compacted; next fed as one chunk
  std::vector<int64_t> keep;          // ascending slot indices that survive
};

Scenario random_scenario(uint32_t seed, int64_t vocab) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> token(3, vocab - 1);
  Scenario s;
  for (int i = 0; i < 20; ++i) s.prefix.push_back(token(rng));
  for (int i = 0; i < 3; ++i) s.next.push_back(token(rng));
  std::vector<int64_t> slots(20);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  s.keep.assign(slots.begin(), slots.begin() + 11);
  std::sort(s.keep.begin(), s.keep.end());
  return s;
}

// Logits [3, V] of `next` after prefix → compact, computed by the numpy reference.
at::Tensor oracle_logits(const std::filesystem::path& dir, const Scenario& s) {
  const json out = run_python_oracle(fmt::format(
      "from ref_decoder import Decoder\n"
      "m = Decoder({})\nc = m.new_cache()\nprefix = {}\n"
      "for i in range(0, len(prefix), 7): m.forward(prefix[i:i+7], c, positions=list(range(i, min(i+7, len(prefix)))))\n"
      "c.compact({})\n"
      "print(json.dumps(m.forward({}, c, positions=[20, 21, 22]).tolist()))\n",
      json(dir.string()).dump(), json(s.prefix).dump(), json(s.keep).dump(), json(s.next).dump()));
  return json_matrix(out);
}

at::Tensor prefill_in_chunks(const Model& model, KvCache& cache, const std::vector<std::vector<int64_t>>& rows) {
  const int64_t n = static_cast<int64_t>(rows[0].size()), B = static_cast<int64_t>(rows.size());
  at::Tensor all = at::empty({B, n}, at::kLong);
  for (int64_t b = 0; b < B; ++b) all[b].copy_(at::tensor(rows[b], at::kLong));
  at::Tensor logits;
  for (int64_t begin = 0; begin < n; begin += 7) {
    const int64_t len = std::min<int64_t>(7, n - begin);
    logits = model.forward(all.narrow(1, begin, len), position_range(begin, len).expand({B, len}), cache).logits;
  }
  return logits;
}

}  // namespace

TEST_CASE("compacted cache: next steps equal the numpy reference over the surviving entries", "[cache][reference]") {
  if (!python_oracle_available()) {
    WARN("skipped: needs ../shared/tools and /usr/bin/python3 with numpy");
    return;
  }
  for (const char* name : {"stories260K", "tiny-qwen3", "tiny-llama3"}) {
    INFO(name);
    const auto dir = shared_dir() / "models" / name;
    const Model model = Model::load(dir);
    // Two sequences in one batch, each with its own prefix and its own surviving subset.
    const Scenario a = random_scenario(1, model.config().vocab_size), b = random_scenario(2, model.config().vocab_size);
    KvCache cache(cache_shape(model.config()), 2, model.options(), true);
    prefill_in_chunks(model, cache, {a.prefix, b.prefix});
    cache.compact(at::stack({at::tensor(a.keep, at::kLong), at::tensor(b.keep, at::kLong)}));
    REQUIRE(cache.size() == 11);
    CHECK(at::equal(cache.positions()[0], at::tensor(a.keep, at::kLong)));  // original positions survive
    CHECK(at::equal(cache.token_ids()[1], at::tensor(b.prefix, at::kLong).index_select(0, at::tensor(b.keep, at::kLong))));
    at::Tensor next = at::stack({at::tensor(a.next, at::kLong), at::tensor(b.next, at::kLong)});
    const at::Tensor logits = model.forward(next, position_range(20, 3).expand({2, 3}), cache, {true}).logits;
    CHECK(max_abs_diff(logits[0], oracle_logits(dir, a)) < 1e-4);
    CHECK(max_abs_diff(logits[1], oracle_logits(dir, b)) < 1e-4);
  }
}

TEST_CASE("expand_batch replicates a prefilled prompt into identical rollouts", "[cache]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const Model model = Model::load(shared_dir() / "models/stories260K");
  KvCache cache(cache_shape(model.config()), 1, model.options(), false);
  model.forward(ids_tensor({1, 403, 407, 261, 378}), position_range(0, 5), cache);
  cache.expand_batch(3);
  const at::Tensor logits = model.forward(at::full({3, 1}, 261, at::kLong), at::full({3, 1}, 5, at::kLong), cache).logits;
  const at::Tensor single = chunked_logits(model, {1, 403, 407, 261, 378, 261}, 6)[-1];
  for (int64_t b = 0; b < 3; ++b) CHECK(max_abs_diff(logits[b][0], single) < 1e-5);
}
