// Results file, journal and statistics: round trips, torn journal lines after a kill, config mismatches,
// and sign-test / bootstrap values derived by hand.
#include "torch_catch.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "common/error.h"
#include "io/results.h"
#include "common/stats.h"
#include "run/job_lock.h"
#include "run/journal.h"
#include "test_support.h"

namespace {

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = kvbench::testing::scratch_path("run_io_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

kvbench::SampleResults sample(const std::string& id, double score) {
  kvbench::ResultRow row;
  row.sample_id = id;
  row.generated_ids = {5, 6, 7};
  row.output = "text with \"quotes\" and ü";
  row.pred = id == "b" ? std::nullopt : std::optional<std::string>("42");
  row.gold = R"({"answer":"42"})";
  row.score = score;
  row.wall_seconds = 0.125;
  kvbench::RefreshTrace trace;
  trace.phase = "decode";
  trace.layers = 2;
  trace.kv_heads = 2;
  trace.size_after = 1;
  trace.kept_positions = {3, 4, 5, 6};  // per-head layout: 2 layers × 2 KV heads × 1 slot
  trace.scoring_ms = 1.0 / 3.0;
  trace.scores = {0.1f, -1.25f, 3e-8f, 1e30f};  // float32 values no short decimal holds exactly
  trace.candidates_begin = 1;
  trace.candidates_end = 3;
  trace.shadow_lost_queries = 2;  // 2 queries × 2 layers
  trace.shadow_lost_by_layer = {0.25f, 1e-7f, 0.5f, 0.1f};
  trace.shadow_lost_mass = (0.25 + 1e-7 + 0.5 + 0.1) / 4;
  return {{row}, {trace}};
}

}  // namespace

TEST_CASE("results file round trip keeps every field, pred=None and per-head traces", "[run_io]") {
  const auto dir = fresh_dir("roundtrip");
  kvbench::Results results;
  results.info = {"0.1.0", "abc", R"({"J":8})", "1.13.0", "cpu", "float32", "host", "t0", "t1", 3, 5};
  for (const auto& s : {sample("a", 1.0), sample("b", 0.0)}) {
    results.rows.insert(results.rows.end(), s.rows.begin(), s.rows.end());
    results.refreshes.insert(results.refreshes.end(), s.refreshes.begin(), s.refreshes.end());
  }
  results.summary = kvbench::summarize(results.rows);
  kvbench::write_results(dir / "r.h5", results);
  const kvbench::Results back = kvbench::read_results(dir / "r.h5");
  CHECK(back.info.config_json == R"({"J":8})");
  CHECK(back.info.batch == 3);
  CHECK(back.info.threads == 5);
  REQUIRE(back.rows.size() == 2);
  CHECK(kvbench::to_json(back.rows[0]) == kvbench::to_json(results.rows[0]));
  CHECK(kvbench::to_json(back.rows[1]) == kvbench::to_json(results.rows[1]));
  CHECK_FALSE(back.rows[1].pred.has_value());
  CHECK(kvbench::to_json(back.refreshes[1]) == kvbench::to_json(results.refreshes[1]));
  CHECK(back.refreshes[1].scores == results.refreshes[1].scores);
  CHECK(back.refreshes[1].shadow_lost_by_layer == results.refreshes[1].shadow_lost_by_layer);
  CHECK(back.refreshes[1].shadow_lost_mass == results.refreshes[1].shadow_lost_mass);
  // A journal line written before scores, candidates and attention loss were recorded reads as "not recorded".
  kvbench::json old = kvbench::to_json(results.refreshes[1]);
  for (const char* added : {"scores", "candidates_begin", "candidates_end", "shadow_lost_queries", "shadow_lost_mass",
                            "shadow_lost_by_layer"})
    old.erase(added);
  const kvbench::RefreshTrace old_trace = kvbench::trace_from_json(old);
  CHECK(old_trace.scores.empty());
  CHECK(old_trace.candidates_begin == -1);
  CHECK(old_trace.shadow_lost_queries == -1);
  CHECK(old_trace.shadow_lost_by_layer.empty());
  CHECK(std::isnan(old_trace.shadow_lost_mass));
  CHECK(back.summary.score == 0.5);
  CHECK(back.summary.pred_none_rate == 0.5);
  CHECK(back.summary.mean_generated_length == 3.0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("job lock: one holder at a time, the file leaves with it, a killed holder's file blocks nobody",
          "[run_io]") {
  const auto dir = fresh_dir("lock");
  const auto out = dir / "out.h5";
  {
    const auto lock = kvbench::JobLock::try_take(out);
    REQUIRE(lock);
    CHECK(std::filesystem::exists(dir / "out.h5.lock"));
    CHECK_FALSE(kvbench::JobLock::try_take(out));  // flock: a second open file conflicts, in-process too
  }
  CHECK_FALSE(std::filesystem::exists(dir / "out.h5.lock"));
  std::ofstream(dir / "out.h5.lock").put('\n');  // what kill -9 leaves
  CHECK(kvbench::JobLock::try_take(out));
  std::filesystem::remove_all(dir);
}

TEST_CASE("journal: a torn last line is cut off, finished samples survive, other configs are refused", "[run_io]") {
  const auto dir = fresh_dir("journal");
  const auto path = dir / "out.h5.partial.jsonl";
  const kvbench::json config = {{"J", 8}};
  {
    auto journal = kvbench::Journal::open(path, config, false);
    journal.append(sample("a", 1.0));
    journal.append(sample("b", 0.0));
  }
  {  // a kill in the middle of writing the third sample
    std::ofstream torn(path, std::ios::app | std::ios::binary);
    torn << R"({"rows":[{"sample_id":"c","rollo)";
  }
  {
    auto journal = kvbench::Journal::open(path, config, false);
    REQUIRE(journal.finished().size() == 2);
    CHECK(kvbench::to_json(journal.finished().at("a").rows[0]) == kvbench::to_json(sample("a", 1.0).rows[0]));
    CHECK(journal.finished().at("a").refreshes[0].scores == sample("a", 1.0).refreshes[0].scores);  // bit for bit
    journal.append(sample("c", 1.0));  // lands on a clean line
  }
  CHECK(kvbench::Journal::open(path, config, false).finished().size() == 3);
  CHECK_THROWS_WITH(kvbench::Journal::open(path, {{"J", 16}}, false),
                    Catch::Contains("an unfinished run of a different config"));
  CHECK(kvbench::Journal::open(path, {{"J", 16}}, true).finished().empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("sign test and bootstrap: hand-derived values", "[run_io]") {
  CHECK(kvbench::sign_test_p_value(0, 10) == Approx(2.0 / 1024));           // 2 · C(10,0) / 2^10
  CHECK(kvbench::sign_test_p_value(1, 6) == Approx(2.0 * (1 + 6) / 64));    // 2 · (C(6,0)+C(6,1)) / 2^6
  CHECK(kvbench::sign_test_p_value(5, 10) == 1.0);
  CHECK(kvbench::sign_test_p_value(0, 0) == 1.0);
  const kvbench::Interval constant = kvbench::bootstrap_ci({0.5, 0.5, 0.5});
  CHECK(constant.low == 0.5);
  CHECK(constant.high == 0.5);
  const kvbench::Interval spread = kvbench::bootstrap_ci({0, 0, 0, 1, 1, 1, 1, 1, 1, 1});
  CHECK(spread.low < 0.7);
  CHECK(spread.high > 0.7);
  CHECK(spread.high <= 1.0);
  const auto paired = kvbench::compare_paired({1, 1, 1, 0}, {0, 0, 1, 0});
  CHECK(paired.a_better == 2);
  CHECK(paired.b_better == 0);
  CHECK(paired.mean_difference == 0.5);
  CHECK(paired.sign_test_p == Approx(0.5));  // 2 · C(2,0) / 2^2
  CHECK_THROWS_AS(kvbench::compare_paired({1}, {1, 0}), kvbench::Error);
}

TEST_CASE("results file: every truncation and flipped byte is a clean error or the same results", "[run_io][hostile]") {
  const auto dir = fresh_dir("corrupt");
  kvbench::Results results;
  results.info = {"0.1.0", "abc", R"({"J":8})", "1.13.0", "cpu", "float32", "host", "t0", "t1"};
  results.rows = sample("a", 1.0).rows;
  results.refreshes = sample("a", 1.0).refreshes;
  results.summary = kvbench::summarize(results.rows);
  kvbench::write_results(dir / "r.h5", results);
  std::ifstream in(dir / "r.h5", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto damaged = dir / "damaged.h5";
  // Read back: a kvbench::Error naming the file, or (a flip in unused bytes) exactly the results written.
  auto read_damaged = [&](const std::string& contents, const std::string& what) {
    INFO(what);
    std::ofstream(damaged, std::ios::binary | std::ios::trunc) << contents;
    try {
      const kvbench::Results back = kvbench::read_results(damaged);
      CHECK(kvbench::to_json(back.rows[0]) == kvbench::to_json(results.rows[0]));
    } catch (const kvbench::Error& e) {
      CHECK_THAT(e.what(), Catch::Contains(damaged.string()));
    }
  };
  for (size_t size : {size_t{0}, size_t{8}, size_t{511}, size_t{512}, size_t{600}, bytes.size() / 2, bytes.size() - 1})
    read_damaged(bytes.substr(0, size), "truncated to " + std::to_string(size));
  std::mt19937 rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    std::string flipped = bytes;
    const size_t at = rng() % bytes.size();
    flipped[at] = static_cast<char>(flipped[at] ^ (1 + rng() % 255));
    read_damaged(flipped, "byte " + std::to_string(at) + " flipped");
  }
  // Every flip past the user block breaks the seal.
  std::string flipped = bytes;
  flipped[bytes.size() - 3] ^= 1;
  std::ofstream(damaged, std::ios::binary | std::ios::trunc) << flipped;
  CHECK_THROWS_WITH(kvbench::read_results(damaged), Catch::Contains("checksum mismatch"));
  // A garbled seal is damage too (the HDF5 data behind a user block marks a kvbench file), never an
  // unverified read: libhdf5 crashes on some corrupted files (found by fuzz_results).
  flipped = bytes;
  flipped[3] ^= 1;
  std::ofstream(damaged, std::ios::binary | std::ios::trunc) << flipped;
  CHECK_THROWS_WITH(kvbench::read_results(damaged), Catch::Contains("damaged seal"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("journal: a damaged tail is dropped, every sample finished before it is kept", "[run_io][hostile]") {
  const auto dir = fresh_dir("journal_damaged");
  const auto path = dir / "out.h5.partial.jsonl";
  const kvbench::json config = {{"J", 8}};
  for (const std::string tail : {std::string("{\"rows\": [{\"sample_id\": 7\n"), std::string(100, '\0') + "\n",
                                 std::string("not json\n{\"rows\":[],\"refreshes\":[]}\n")}) {
    {
      auto journal = kvbench::Journal::open(path, config, true);
      journal.append(sample("a", 1.0));
      journal.append(sample("b", 0.0));
    }
    std::ofstream(path, std::ios::app | std::ios::binary) << tail;
    {
      auto journal = kvbench::Journal::open(path, config, false);
      CHECK(journal.finished().size() == 2);
      journal.append(sample("c", 1.0));
    }
    CHECK(kvbench::Journal::open(path, config, false).finished().size() == 3);
  }
  // A damaged header: whose run it was is unknown, so the run starts afresh.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "{\"kvbench_jour\n";
  CHECK(kvbench::Journal::open(path, config, false).finished().empty());
  std::filesystem::remove_all(dir);
}
