// Sweep configs are typed by hand and copied between clusters: thousands of mutants of a valid config
// (values of the wrong type, huge or negative sizes, grids that explode, broken h ratios, deleted
// fields) each load into jobs or fail with a kvbench::Error naming the file — no other exception, no
// hang, no attempt at an impossible allocation. The libFuzzer targets cover the torch-free parsers;
// this is the same idea for the readers that live beside libtorch.
#include "torch_catch.h"

#include <filesystem>
#include <fstream>
#include <random>

#include "common/error.h"
#include "run/sweep.h"
#include "test_support.h"

namespace {

using kvbench::json;

json valid_sweep(const std::filesystem::path& dir) {
  return {{"output_dir", dir.string()},
          {"base",
           {{"model", "models/m"}, {"task", "rare-fact"}, {"data", "rare-fact:seed=0,samples=2,words=20,facts=1"},
            {"max_new", 4}, {"rollouts", 2}, {"temperature", 0.7}}},
          {"grid", {{"policy", {"full", "sliding", "h2o"}}, {"J", {16, 32}}, {"h", {"J/4", 4}}, {"seed", {0, 1}}}}};
}

// Values that broke or could break a loader: extremes of every JSON type.
json hostile_value(std::mt19937& rng) {
  static const std::vector<json> pool = {
      -1, 0, 1, int64_t{1} << 62, -(int64_t{1} << 62), uint64_t{18446744073709551615ULL}, 1e308, -1e308, 0.5,
      "J/0", "J/-1", "J/99999999999999999999", "J/", "J", "", "auto", "prefill_end", "counter-causal",
      "rare-fact:seed=0,samples=10000000,words=10000000,facts=1", "rare-fact:facts=1000", nullptr, true,
      json::array(), json::object(), json::array({json::array({json::array()})}), std::string(4096, 'x')};
  return pool[rng() % pool.size()];
}

// Every (parent, key) in the tree, objects and arrays alike.
void collect_slots(json& node, std::vector<std::pair<json*, json>>& slots) {
  if (node.is_object()) {
    for (auto& [key, child] : node.items()) {
      slots.push_back({&node, key});
      collect_slots(child, slots);
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) {
      slots.push_back({&node, i});
      collect_slots(node[i], slots);
    }
  }
}

json mutate(json config, std::mt19937& rng) {
  for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
    std::vector<std::pair<json*, json>> slots;
    collect_slots(config, slots);
    auto& [parent, key] = slots[rng() % slots.size()];
    json& target = key.is_string() ? (*parent)[key.get<std::string>()] : (*parent)[key.get<size_t>()];
    switch (rng() % 4) {
      case 0:  // a grid axis a thousand values long
        if (target.is_array() && !target.empty()) target = json(std::vector<json>(1000, target[0]));
        else target = hostile_value(rng);
        break;
      case 1:
        if (key.is_string()) parent->erase(key.get<std::string>());
        else target = hostile_value(rng);
        break;
      default:
        target = hostile_value(rng);
    }
  }
  return config;
}

}  // namespace

TEST_CASE("mutated sweep configs load or fail with a kvbench::Error naming the file", "[hostile]") {
  const auto dir = kvbench::testing::scratch_path("hostile_sweep");
  std::filesystem::create_directories(dir);
  const auto path = dir / "sweep.json";
  std::mt19937 rng(2026);
  int loaded = 0, refused = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const json mutant = mutate(valid_sweep(dir), rng);
    std::ofstream(path, std::ios::trunc) << mutant.dump();
    INFO(mutant.dump().substr(0, 2000));
    try {
      const kvbench::Sweep sweep = kvbench::load_sweep(path, "", dir);
      CHECK(sweep.jobs.size() <= 100000);
      ++loaded;
    } catch (const kvbench::Error& e) {
      CHECK_THAT(e.what(), Catch::Contains(path.string()));
      ++refused;
    } catch (const std::exception& e) {
      FAIL("escaped as " << typeid(e).name() << ": " << e.what());
    }
  }
  CHECK(loaded > 0);  // the mutations leave some configs valid, so loading is exercised too
  CHECK(refused > 0);
  std::filesystem::remove_all(dir);
}
