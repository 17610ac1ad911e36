// The `reference` profile against the counter-causal paper's own code (../shared/reference/counter_causal,
// hooks.py, driven by tests/peers/reference_counter_causal.py): its five hooks (sliding, importance, h2o,
// counter_causal, counter_fast) × chunked / prefill_end × the default window, a recent window with a frozen
// prefix, min_gap, and a prompt of one chunk, on checkpoints transformers wrote (Qwen2.5 tied, Llama-3.1 with
// llama3 rope scaling, Qwen3 with q/k-norm) and on tinystories-656k (a real pretrained export); h2o also over
// a run of samples sharing one hook (its accumulator leaks from one into the next), and stops at an eos the
// loop meets first or later. Per case: the greedy tokens and the positions kept by every evicting hook call are
// identical. Then each quirk of the profile is switched off alone, and the cases it decides must part.
// And tasks.py's task runners end to end against `kvbench run --profile reference` on small files in the tasks'
// formats: prompt ids, frozen size, generated ids, answers and scores.
// Skips (with a warning) where the peers' environment or ../shared is absent; fails under CI.
#include "torch_catch.h"

#include <fstream>
#include <iostream>
#include <cstdio>
#include <map>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/generate.h"
#include "io/results.h"
#include "run/job.h"
#include "run/journal.h"
#include "run/profile.h"
#include "run/runner.h"
#include "tasks/task.h"
#include "real_model.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;
using json = nlohmann::json;

namespace {

const std::map<std::string, std::string> kPolicyOf = {{"sliding", "sliding"},
                                                      {"importance", "importance"},
                                                      {"h2o", "h2o"},
                                                      {"counter_causal", "counter-causal"},
                                                      {"counter_fast", "counter-causal-fast"}};

struct Case {
  std::string model;  // directory
  std::string hook;
  std::string variant;
  std::vector<int64_t> prompt;
  int64_t J = 16, h = 4, recent = -1, frozen = 0, min_gap = 0;
  std::string mode = "chunked";
  int64_t max_new = 16;
  std::optional<int64_t> eos;
  std::string group;  // cases of one group share one hook / policy, in order
  std::filesystem::path output;
};

json case_json(const Case& c) {
  return {{"model", c.model},     {"prompt", c.prompt}, {"hook", c.hook},
          {"J", c.J},             {"h", c.h},           {"recent", c.recent >= 0 ? json(c.recent) : json(nullptr)},
          {"frozen", c.frozen},   {"min_gap", c.min_gap}, {"mode", c.mode},
          {"max_new", c.max_new}, {"eos", c.eos ? json(*c.eos) : json(nullptr)},
          {"group", c.group},     {"output", c.output.string()}};
}

std::vector<int64_t> random_prompt(std::mt19937_64& rng, int64_t length, int64_t vocab) {
  std::vector<int64_t> ids(length);
  for (auto& id : ids) id = 3 + static_cast<int64_t>(rng() % (vocab - 3));
  return ids;
}

// What one side did: the generated ids and the kept positions of every call that evicted.
struct Outcome {
  std::vector<int64_t> generated;
  std::vector<std::vector<int64_t>> evictions;
  int64_t calls = 0;  // the reference's hook calls (evicting or not)
};

Outcome reference_outcome(const Case& c) {
  const json out = json::parse(std::ifstream(c.output));
  Outcome o;
  o.generated = out["generated"].get<std::vector<int64_t>>();
  for (const auto& call : out["calls"]) {
    ++o.calls;
    if (static_cast<int64_t>(call["kept"].size()) < call["size_before"].get<int64_t>())
      o.evictions.push_back(call["kept"].get<std::vector<int64_t>>());
  }
  return o;
}

// One switch of the profile, off (or all on).
enum class Off { None, PredictedIds, FirstTokenUnchecked, LoneChunk, QNorm, Leak };

// kvbench on the cases of one group in order, one policy instance for all (the runner does so for a
// policy that carries state across samples), under the reference profile less `off`.
std::vector<Outcome> kvbench_outcomes(const Model& model, const std::vector<Case>& group, Off off) {
  const Case& first = group.front();
  JobConfig job;
  job.policy = kPolicyOf.at(first.hook);
  job.profile = "reference";
  job.budget.J = BudgetJ::tokens(first.J);
  job.budget.h = first.h;
  // evaluate.py gives sliding and importance no recent window.
  job.budget.recent = first.hook == "sliding" || first.hook == "importance" ? 0 : first.recent;
  job.budget.frozen = std::to_string(first.frozen);
  job.budget.min_gap = first.min_gap;
  job.budget.mode = first.mode;
  job.max_new = first.max_new;
  // A quirk switched off: the knob set back to kvbench's side over the profile's preset, for a policy that has it.
  const auto set_back = [&](const std::string& knob, const std::string& value) {
    if (make_policy(job.policy)->knob_settings().contains(knob)) job.policy += ":" + knob + "=" + value;
  };
  if (off == Off::QNorm) set_back("q_norm", "true");
  if (off == Off::Leak) set_back("carry", "false");
  auto policy = make_policy(policy_spec(job, Profile::Reference));
  std::vector<Outcome> outcomes;
  for (const Case& c : group) {
    GenerationSettings settings = generation_settings(job, Profile::Reference, *policy, 0, nullptr);
    if (c.eos) settings.eos_ids = {*c.eos};  // the tokenizer's eos_token, as end_ids gives it under the profile
    if (off == Off::PredictedIds) settings.reference.predicted_ids = false;
    if (off == Off::FirstTokenUnchecked) settings.reference.first_token_unchecked = false;
    if (off == Off::LoneChunk) settings.reference.lone_chunk_unrefreshed = false;
    const GenerationResult result = generate(model, *policy, c.prompt, settings);
    Outcome o;
    o.generated = result.rollouts[0].generated;
    for (const RefreshRecord& r : result.refreshes)
      if (r.size_after < r.size_before) {
        const at::Tensor kept = r.kept_positions[0].contiguous();
        o.evictions.emplace_back(kept.data_ptr<int64_t>(), kept.data_ptr<int64_t>() + kept.numel());
      }
    outcomes.push_back(std::move(o));
  }
  return outcomes;
}

struct Tally {
  int64_t configurations = 0, calls = 0, evictions = 0, identical_kept = 0, identical_tokens = 0;
};

// tests/peers/reference_counter_causal.py with `arguments` (make DIR | hooks CASES | tasks CASES).
void run_driver(const std::string& arguments) {
  const std::string driver = "TQDM_DISABLE=1 TRANSFORMERS_VERBOSITY=error KVBENCH_SHARED='" + shared_dir().string() +
                             "' '" + peer_python() + "' '" +
                             (source_dir() / "tests/peers/reference_counter_causal.py").string() + "' ";
  INFO(driver + arguments);
  REQUIRE(run_command(driver + arguments + " 2>&1; echo exit=$?").find("exit=0") != std::string::npos);
}

}  // namespace

TEST_CASE("The reference profile generates and evicts token for token as the paper's own code (hooks.py)",
          "[policy][peers][reference]") {
  KVBENCH_REQUIRE_SHARED("reference/counter_causal/hooks.py");
  KVBENCH_REQUIRE_SHARED("models/tinystories-656k");
  if (!peer_available("transformers")) return;
  const auto dir = scratch_path("counter_causal_reference");
  std::filesystem::create_directories(dir);
  run_driver("make '" + (dir / "models").string() + "'");

  std::mt19937_64 rng(41);
  std::vector<std::vector<Case>> groups;  // each group: one hook object over its cases
  std::map<std::string, Model> models;
  const std::vector<std::filesystem::path> model_dirs = {dir / "models/qwen2.5-tied", dir / "models/llama-3.1",
                                                        dir / "models/qwen3", shared_dir() / "models/tinystories-656k"};
  for (const auto& model_dir : model_dirs) models.emplace(model_dir.string(), Model::load(model_dir));
  const auto add = [&](Case c) {
    c.output = dir / fmt::format("{}.json", groups.size());
    c.group = c.group.empty() ? fmt::format("case {}", groups.size()) : c.group;
    if (!groups.empty() && groups.back().front().group == c.group) {
      c.output = dir / fmt::format("{}_{}.json", groups.size() - 1, groups.back().size());
      groups.back().push_back(c);
    } else {
      groups.push_back({c});
    }
  };
  for (const auto& model_dir : model_dirs) {
    const int64_t vocab = models.at(model_dir.string()).config().vocab_size;
    for (const auto& [hook, policy] : kPolicyOf) {
      const bool counter = hook.rfind("counter", 0) == 0;
      for (const std::string mode : {"chunked", "prefill_end"}) {
        Case base{model_dir.string(), hook, "J 16, h 4", random_prompt(rng, 50, vocab)};
        base.mode = mode;
        add(base);
        Case window = base;
        window.variant = "recent 4, frozen 5";
        window.prompt = random_prompt(rng, 45, vocab);
        window.recent = 4;
        window.frozen = 5;
        add(window);
        if (counter) {
          Case gap = base;
          gap.variant = "min_gap 2";
          gap.prompt = random_prompt(rng, 40, vocab);
          gap.min_gap = 2;
          add(gap);
        }
      }
      Case lone{model_dir.string(), hook, "one chunk: P 40 ≤ h 48", random_prompt(rng, 40, vocab)};
      lone.h = 48;
      lone.max_new = 12;
      add(lone);
      if (hook == "h2o") {  // one hook over three samples: under prefill_end its accumulator leaks on
        for (const int64_t length : {30, 36, 44}) {
          Case run{model_dir.string(), hook, "three samples, one hook", random_prompt(rng, length, vocab)};
          run.mode = "prefill_end";
          run.max_new = 8;
          run.group = "leak " + model_dir.string();
          add(run);
        }
      }
    }
  }
  json cases = json::array();
  for (const auto& group : groups)
    for (const Case& c : group) cases.push_back(case_json(c));
  std::ofstream(dir / "cases.json") << cases.dump();
  run_driver("hooks '" + (dir / "cases.json").string() + "'");

  // Stops: an eos met as the first token (the loop does not check it) and as a later one, on every model.
  std::vector<std::vector<Case>> stops;
  for (size_t g = 0; g < groups.size(); ++g) {
    const Case& c = groups[g].front();
    if (c.hook != "counter_causal" || c.mode != "chunked" || c.variant != "J 16, h 4") continue;
    const std::vector<int64_t> generated = reference_outcome(c).generated;
    for (const size_t at : {size_t{0}, size_t{5}}) {
      Case stop = c;
      stop.variant = at == 0 ? "eos = the first token" : "eos = the sixth token";
      stop.eos = generated.at(at);
      stop.group = fmt::format("stop {} {}", g, at);
      stop.output = dir / fmt::format("stop_{}_{}.json", g, at);
      stops.push_back({stop});
    }
  }
  json stop_cases = json::array();
  for (const auto& group : stops) stop_cases.push_back(case_json(group.front()));
  std::ofstream(dir / "stops.json") << stop_cases.dump();
  run_driver("hooks '" + (dir / "stops.json").string() + "'");
  groups.insert(groups.end(), stops.begin(), stops.end());

  std::map<std::string, Tally> tally;  // per hook
  std::map<Off, int64_t> parted;       // cases that part from the paper's code with one switch off
  const std::vector<std::pair<Off, const char*>> switches = {{Off::PredictedIds, "decode entries keep their own ids"},
                                                             {Off::FirstTokenUnchecked, "the first token is checked"},
                                                             {Off::LoneChunk, "a lone chunk is refreshed"},
                                                             {Off::QNorm, "queries with q_norm"},
                                                             {Off::Leak, "h2o's accumulator fresh per sample"}};
  for (const auto& group : groups) {
    const Model& model = models.at(group.front().model);
    const std::vector<Outcome> ours = kvbench_outcomes(model, group, Off::None);
    for (size_t i = 0; i < group.size(); ++i) {
      const Case& c = group[i];
      INFO(fmt::format("{} on {}, {}, {}, sample {} of the group", c.hook, c.model, c.mode, c.variant, i));
      const Outcome theirs = reference_outcome(c);
      Tally& t = tally[c.hook];
      ++t.configurations;
      t.calls += theirs.calls;
      t.evictions += static_cast<int64_t>(theirs.evictions.size());
      for (size_t e = 0; e < std::min(theirs.evictions.size(), ours[i].evictions.size()); ++e)
        t.identical_kept += theirs.evictions[e] == ours[i].evictions[e];
      t.identical_tokens += theirs.generated == ours[i].generated;
      CHECK(ours[i].evictions == theirs.evictions);
      CHECK(ours[i].generated == theirs.generated);
    }
    for (const auto& [off, label] : switches) {
      const std::vector<Outcome> without = kvbench_outcomes(model, group, off);
      for (size_t i = 0; i < group.size(); ++i) {
        const Outcome theirs = reference_outcome(group[i]);
        parted[off] += without[i].evictions != theirs.evictions || without[i].generated != theirs.generated;
      }
    }
  }
  std::cout << "| hook | configurations | hook calls | evicting calls | identical kept sets | identical tokens |\n"
               "|---|---|---|---|---|---|\n";
  for (const auto& [hook, t] : tally)
    std::cout << fmt::format("| {} | {} | {} | {} | {} | {} |\n", hook, t.configurations, t.calls, t.evictions,
                             t.identical_kept, t.identical_tokens);
  std::cout << "| switched off | cases that part from the paper's code |\n|---|---|\n";
  for (const auto& [off, label] : switches) {
    std::cout << fmt::format("| {} | {} |\n", label, parted[off]);
    INFO("with " << label << ", kvbench should part from the paper's code somewhere");
    CHECK(parted[off] > 0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("The reference profile on a real instruct model and a real prompt: the five hooks token for token "
          "(SmolLM2-135M-Instruct)", "[policy][peers][reference][real-model][one-torch]") {
  KVBENCH_REQUIRE_SHARED("reference/counter_causal/hooks.py");
  const auto gguf = smollm2_gguf();
  if (!cached_model_available(gguf) || !peer_available("transformers") || !peer_available("gguf")) return;
  const Model model = Model::load(gguf);
  // A needle prompt of 512 tokens, raw as the paper's code prompts.
  const auto prompt = niah_prompts(Tokenizer::load(gguf), "niah:lengths=512,depths=50", false).front();
  const auto dir = scratch_path("counter_causal_real");
  std::filesystem::create_directories(dir);
  std::vector<Case> cases;
  json listed = json::array();
  for (const auto& [hook, policy] : kPolicyOf)
    for (const std::string mode : {"chunked", "prefill_end"}) {
      Case c{gguf.string(), hook, "J 128, h 32", prompt};
      c.J = 128;
      c.h = 32;
      c.mode = mode;
      c.max_new = 24;
      c.group = hook + " " + mode;
      c.output = dir / fmt::format("{}.json", cases.size());
      listed.push_back(case_json(c));
      cases.push_back(c);
    }
  std::ofstream(dir / "cases.json") << listed.dump();
  run_driver("hooks '" + (dir / "cases.json").string() + "'");
  std::cout << "| SmolLM2-135M-Instruct, hook | mode | evicting calls | identical kept sets | identical tokens |\n";
  for (const Case& c : cases) {
    INFO(c.hook << ", " << c.mode);
    const Outcome theirs = reference_outcome(c);
    const Outcome ours = kvbench_outcomes(model, {c}, Off::None).front();
    CHECK(!theirs.evictions.empty());
    CHECK(ours.evictions == theirs.evictions);
    CHECK(ours.generated == theirs.generated);
    std::cout << fmt::format("| {} | {} | {} | {} | {} |\n", c.hook, c.mode, theirs.evictions.size(),
                             ours.evictions == theirs.evictions ? "yes" : "no",
                             ours.generated == theirs.generated ? "yes" : "no");
  }
  std::filesystem::remove_all(dir);
}

namespace {

using ordered = nlohmann::ordered_json;

ordered read_ordered(const std::filesystem::path& path) { return ordered::parse(std::ifstream(path)); }

ordered first(const ordered& list, size_t n) {
  return ordered(std::vector<ordered>(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(std::min(n, list.size()))));
}

// Small files in each task's published format (the samples' order and every field as in the real files),
// short enough for tinystories-656k's 512 positions.
std::filesystem::path math500_fixture(const std::filesystem::path& dir) {
  std::ifstream in(shared_dir() / "datasets/math500/test.jsonl");
  std::ofstream out(dir / "math500.jsonl");
  std::string line;
  for (int i = 0; i < 3 && std::getline(in, line); ++i) out << line << "\n";
  return dir / "math500.jsonl";
}

std::filesystem::path locomo_fixture(const std::filesystem::path& dir) {
  ordered conversation = read_ordered(shared_dir() / "datasets/locomo/locomo10.json").at(0);
  ordered kept = ordered::object();
  for (const auto& [key, value] : conversation["conversation"].items()) {
    int session = 0;
    if (std::sscanf(key.c_str(), "session_%d", &session) == 1 && session > 2) continue;
    kept[key] = value.is_array() ? first(value, 3) : value;
  }
  conversation["conversation"] = kept;
  ordered qa = ordered::array();
  for (const int category : {1, 2, 5})
    for (const auto& item : conversation["qa"])
      if (item.value("category", 0) == category) {
        qa.push_back(item);
        break;
      }
  conversation["qa"] = qa;
  std::ofstream(dir / "locomo.json") << ordered::array({conversation}).dump();
  return dir / "locomo.json";
}

std::filesystem::path qasper_fixture(const std::filesystem::path& dir) {
  const ordered all = read_ordered(shared_dir() / "datasets/qasper/qasper-test-v0.3.json");
  ordered papers = ordered::object();
  for (auto it = all.begin(); it != all.end() && papers.size() < 2; ++it) {
    ordered paper = it.value();
    paper["abstract"] = paper["abstract"].get<std::string>().substr(0, 200);
    ordered sections = ordered::array();
    for (size_t s = 0; s < 2 && s < paper["full_text"].size(); ++s) {
      ordered section = paper["full_text"][s];
      ordered paragraphs = ordered::array();
      for (size_t p = 0; p < 2 && p < section["paragraphs"].size(); ++p)
        paragraphs.push_back(section["paragraphs"][p].get<std::string>().substr(0, 150));
      section["paragraphs"] = paragraphs;
      sections.push_back(section);
    }
    paper["full_text"] = sections;
    paper["qas"] = first(paper["qas"], 2);
    papers[it.key()] = paper;
  }
  std::ofstream(dir / "qasper.json") << papers.dump();
  return dir / "qasper.json";
}

struct TaskJob {
  std::string task;  // tasks.py's name
  std::string hook;
  std::string mode = "chunked";
  bool auto_frozen = false;
  int64_t J = 64, h = 16, max_new = 24;
};

const std::map<std::string, std::string> kTaskOf = {
    {"math500", "math500"}, {"longhealth", "longhealth"}, {"qasper", "qasper-paper"}, {"locomo", "locomo-paper"}};

}  // namespace

TEST_CASE("The reference profile runs the paper's tasks as tasks.py does: prompt ids, frozen size, generated ids, "
          "answers and scores", "[peers][reference][tasks]") {
  KVBENCH_REQUIRE_SHARED("reference/counter_causal/tasks.py");
  KVBENCH_REQUIRE_SHARED("models/tinystories-656k");
  KVBENCH_REQUIRE_SHARED("datasets/qasper/qasper-test-v0.3.json");
  if (!peer_available("nltk") || !peer_available("math_verify")) return;
  const auto dir = scratch_path("counter_causal_tasks");
  std::filesystem::create_directories(dir);
  const std::filesystem::path model_dir = shared_dir() / "models/tinystories-656k";
  const std::map<std::string, std::filesystem::path> data = {
      {"math500", math500_fixture(dir)},
      {"locomo", locomo_fixture(dir)},
      {"qasper", qasper_fixture(dir)},
      {"longhealth", source_dir() / "tests/data/longhealth_fixture.json"}};
  // MATH500 as Table 2 runs it (frozen 0), the long-context tasks as Figure 5 (--auto_frozen); h2o's one hook
  // over the task's samples in prefill_end mode, where its accumulator carries from one sample into the next.
  // The long-context tasks' J covers their system text (evaluate.py subtracts it) and half their context.
  const std::vector<TaskJob> jobs = {
      {"math500", "counter_causal"},
      {"math500", "h2o", "prefill_end"},
      {"locomo", "counter_fast", "chunked", true, 192, 32},
      {"locomo", "h2o", "prefill_end", true, 192, 32},
      {"qasper", "counter_causal", "chunked", true, 192, 32},
      {"longhealth", "importance", "chunked", true, 160, 32},
      {"longhealth", "h2o", "prefill_end", true, 160, 32}};
  json cases = json::array();
  for (size_t i = 0; i < jobs.size(); ++i)
    cases.push_back({{"task", jobs[i].task}, {"model", model_dir.string()}, {"data", data.at(jobs[i].task).string()},
                     {"hook", jobs[i].hook}, {"J", jobs[i].J}, {"h", jobs[i].h}, {"recent", nullptr},
                     {"auto_frozen", jobs[i].auto_frozen}, {"mode", jobs[i].mode}, {"max_new", jobs[i].max_new},
                     {"output", (dir / fmt::format("task_{}.json", i)).string()}});
  std::ofstream(dir / "tasks.json") << cases.dump();
  if (std::getenv("KVBENCH_KEEP")) std::cout << dir << "\n";
  const std::string command = "TQDM_DISABLE=1 TRANSFORMERS_VERBOSITY=error KVBENCH_SHARED='" + shared_dir().string() +
                              "' '" + peer_python() + "' '" +
                              (source_dir() / "tests/peers/reference_counter_causal.py").string() + "' tasks '" +
                              (dir / "tasks.json").string() + "' 2>&1; echo exit=$?";
  INFO(command);
  const std::string log = run_command(command);
  INFO(log);
  REQUIRE(log.find("exit=0") != std::string::npos);

  const Model model = Model::load(model_dir);
  const Tokenizer tokenizer = Tokenizer::load(model_dir);
  std::cout << "| task | hook | mode | samples | prompt ids | frozen | generated ids | answers | scores |\n"
               "|---|---|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < jobs.size(); ++i) {
    const TaskJob& t = jobs[i];
    INFO(t.task << " " << t.hook << " " << t.mode);
    const json theirs = json::parse(std::ifstream(cases[i]["output"].get<std::string>()));
    JobConfig job;
    job.model = model_dir.string();
    job.task = kTaskOf.at(t.task);
    job.data = data.at(t.task).string();
    job.policy = kPolicyOf.at(t.hook);
    job.budget.J = BudgetJ::tokens(t.J);
    job.budget.h = t.h;
    job.budget.frozen = t.auto_frozen ? "auto" : "0";
    job.budget.mode = t.mode;
    job.max_new = t.max_new;
    job.profile = "reference";
    const ResolvedJob resolved = resolve_job(job, dir);
    const auto out = dir / fmt::format("task_{}.h5", i);
    const ModelLoader loaded = [&]() -> ModelRef { return {model, tokenizer}; };
    run_job(resolved, out, loaded, {/*force=*/true, /*progress=*/false, "", /*batch=*/16});
    const Results results = read_results(out);
    const auto task = tasks::make_task(resolved.task, tasks::Protocol::Reference);
    const std::vector<tasks::Sample> samples = task->load(resolved.data);
    const json& reference = theirs["samples"];
    REQUIRE(results.rows.size() == reference.size());
    REQUIRE(samples.size() == reference.size());
    int64_t same_prompt = 0, same_frozen = 0, same_tokens = 0, same_answer = 0, same_score = 0;
    for (size_t s = 0; s < samples.size(); ++s) {
      INFO("sample " << samples[s].id);
      const EncodedPrompt prompt = encode_prompt(task->prompt(samples[s]), tokenizer, JobConfig{});
      const ResultRow& row = results.rows[s];
      const json& r = reference[s];
      same_prompt += prompt.ids == r["prompt_ids"].get<std::vector<int64_t>>();
      same_frozen += (t.auto_frozen ? prompt.system_tokens : 0) == theirs["frozen"].get<int64_t>();
      same_tokens += row.generated_ids == r["generated"].get<std::vector<int64_t>>();
      // tasks.py names an answer for math500 (the last box) and longhealth (the letter) only.
      const bool names_answer = t.task == "math500" || t.task == "longhealth";
      same_answer += !names_answer || (r["pred"].is_null() ? !row.pred : row.pred == r["pred"].get<std::string>());
      same_score += std::abs(row.score - r["score"].get<double>()) < 1e-9;
    }
    if (t.hook == "h2o") {  // killed after its first sample, then resumed: the carried accumulator is rebuilt
      std::filesystem::remove(out);
      Journal::open(journal_path(out), to_json(resolved), /*force=*/true).append({{results.rows.front()}, {}});
      const RunOutcome resumed = run_job(resolved, out, loaded, {/*force=*/false, /*progress=*/false, "", 16});
      CHECK(resumed.resumed == 1);
      const Results again = read_results(out);
      REQUIRE(again.rows.size() == results.rows.size());
      for (size_t s = 1; s < again.rows.size(); ++s) CHECK(again.rows[s].generated_ids == results.rows[s].generated_ids);
    }
    const auto n = static_cast<int64_t>(samples.size());
    CHECK(same_prompt == n);
    CHECK(same_frozen == n);
    CHECK(same_tokens == n);
    CHECK(same_answer == n);
    CHECK(same_score == n);
    std::cout << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", t.task, t.hook, t.mode, n, same_prompt,
                             same_frozen, same_tokens, same_answer, same_score);
  }
  std::filesystem::remove_all(dir);
}
