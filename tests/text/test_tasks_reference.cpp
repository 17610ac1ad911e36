// The tasks the counter-causal paper's code runs, under Protocol::Reference, against that code itself:
// tests/peers/reference_tasks.py imports its tasks.py in place (../shared/reference/counter_causal, MIT; never
// copied) and writes what tasks.py and evaluate.py make of the same data; kvbench must give the same
// - raw prompt of every MATH500 problem, LoCoMo QA, Qasper question (the dev split when ../shared has it,
//   else the test split: the builders do not depend on the split) and LongHealth fixture question, in the
//   reference's sample order;
// - --auto_frozen text (Prompt::system_text, the same for every sample) and its token count with the real
//   Qwen3 and Llama 3 tokenizers (HF tokenizers' encode with special tokens vs kvbench's Tokenizer);
// - LongHealth gold letters and extracted letters, Qasper references;
// - MATH500 extracted answer (extract_boxed_answer), stop rule (boxed_done) and verdict (compare_math: math-
//   verify itself, here through kvbench's math-verify coprocess);
// - Qasper and LoCoMo scores (_score_qasper, _score_locomo) within 1e-12, on rewrites of every reference;
// - NLTK's Porter stem of every word of locomo10.json (kvbench uses its own port).
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>

#include "common/json_file.h"
#include "tasks/graders/f1.h"
#include "tasks/graders/math_verify.h"
#include "tasks/task.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

namespace {

using kvbench::json;
using kvbench::tasks::Protocol;

// Mismatches of one kind of comparison, with the first few for the failure message.
struct Tally {
  std::size_t cases = 0, mismatches = 0;
  std::string examples;
  void add(bool same, const std::string& what) {
    ++cases;
    if (same) return;
    if (++mismatches <= 5) examples += "  " + what.substr(0, 600) + "\n";
  }
};

// The first difference of two long strings, with context.
std::string first_difference(const std::string& ours, const std::string& theirs) {
  std::size_t i = 0;
  while (i < ours.size() && i < theirs.size() && ours[i] == theirs[i]) ++i;
  const std::size_t from = i > 80 ? i - 80 : 0;
  return "at byte " + std::to_string(i) + ": kvbench " + json(ours.substr(from, 160)).dump(-1, ' ', false, json::error_handler_t::replace) +
         " reference " + json(theirs.substr(from, 160)).dump(-1, ' ', false, json::error_handler_t::replace);
}

struct TaskData {
  std::unique_ptr<kvbench::tasks::Task> task;
  std::vector<kvbench::tasks::Sample> samples;
  std::map<std::string, std::size_t> index;  // id -> position
  std::size_t next = 0;                      // the reference's next sample, for the order check
  const kvbench::tasks::Sample& sample(const std::string& id) const { return samples.at(index.at(id)); }
};

}  // namespace

TEST_CASE("Protocol::Reference tasks agree with the counter-causal paper's tasks.py", "[tasks][peers][reference]") {
  KVBENCH_REQUIRE_SHARED("reference/counter_causal/tasks.py");
  KVBENCH_REQUIRE_SHARED("datasets/math500/test.jsonl");
  KVBENCH_REQUIRE_SHARED("datasets/locomo/locomo10.json");
  KVBENCH_REQUIRE_SHARED("datasets/qasper");
  if (!kvbench::testing::peer_available("math_verify") || !kvbench::testing::peer_available("nltk")) return;
  const auto shared = kvbench::testing::shared_dir();
  const auto script = kvbench::testing::source_dir() / "tests/peers/reference_tasks.py";
  const auto fixture = kvbench::testing::source_dir() / "tests/data/longhealth_fixture.json";
  const std::string output = kvbench::testing::run_command("'" + kvbench::testing::peer_python() + "' '" + script.string() +
                                                           "' '" + shared.string() + "' '" + fixture.string() + "'");

  std::map<std::string, TaskData> tasks;
  std::map<std::string, std::string> texts;
  std::vector<json> systems;
  std::map<std::string, Tally> tallies;
  const auto task = [&](const std::string& name) -> TaskData& {
    auto& data = tasks[name];
    if (!data.task) data.task = kvbench::tasks::make_task(name, Protocol::Reference);
    return data;
  };
  kvbench::tasks::Sample math_sample{"math", json::object()};
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const json item = json::parse(line);
    const std::string kind = item["kind"];
    const std::string name = item.value("task", "");
    if (kind == "text") {
      texts[item["key"]] = item["text"];
    } else if (kind == "system") {
      systems.push_back(item);
    } else if (kind == "file") {
      auto& data = task(name);
      data.samples = data.task->load(item["path"].get<std::string>());
      for (std::size_t i = 0; i < data.samples.size(); ++i) data.index[data.samples[i].id] = i;
    } else if (kind == "prompt") {
      auto& data = task(name);
      const std::string id = item["id"];
      std::string theirs;
      for (const auto& part : item["parts"]) theirs += part.is_string() ? part.get<std::string>() : texts.at(part["text"]);
      const bool in_order = data.next < data.samples.size() && data.samples[data.next].id == id;
      tallies[name + " sample order"].add(in_order, "reference's next sample " + id);
      ++data.next;
      const bool known = data.index.count(id) > 0;
      const std::string ours = known ? data.task->prompt(data.sample(id)).raw : "";
      tallies[name + " raw prompt"].add(known && ours == theirs, id + (known ? " " + first_difference(ours, theirs) : ": no such sample"));
    } else if (kind == "gold") {
      const auto& record = task(name).sample(item["id"]).record;
      json ours = record["answer"];
      if (name == "qasper-paper") {
        ours = json::array();
        for (const auto& reference : record["references"]) ours.push_back(reference["answer"]);
      }
      tallies[name + " gold"].add(ours == item["gold"], item["id"].get<std::string>() + ": kvbench " + ours.dump() + " reference " + item["gold"].dump());
    } else if (kind == "math") {
      const auto& math = *task("math500").task;
      const std::string text = item["output"];
      math_sample.record = {{"id", "math"}, {"answer", item["gold"]}};
      const auto grade = kvbench::tasks::grade_total(math, math_sample, text, "math case");
      const json pred = grade.pred ? json(*grade.pred) : json();
      const std::string what = "output " + json(text).dump() + " gold " + item["gold"].dump();
      tallies["math500 extracted answer"].add(pred == item["pred"], what + ": kvbench " + pred.dump() + " reference " + item["pred"].dump());
      tallies["math500 stop rule"].add(math.should_stop(text) == !item["pred"].is_null(), what);
      tallies["math500 verdict (math-verify)"].add((grade.score > 0.5) == item["correct"].get<bool>(),
                                                   what + ": kvbench " + std::to_string(grade.score) + grade.details.dump());
    } else if (kind == "letter") {
      auto& data = task("longhealth");
      const auto grade = data.task->grade(data.samples.at(0), item["output"].get<std::string>());
      const json pred = grade.pred ? json(*grade.pred) : json();
      tallies["longhealth letter"].add(pred == item["pred"], item["output"].dump() + ": kvbench " + pred.dump());
    } else if (kind == "score") {
      auto& data = task(name);
      const std::string id = item["id"];
      const double ours = data.task->grade(data.sample(id), item["output"].get<std::string>()).score;
      const double theirs = item["score"];
      tallies[name + " score"].add(std::abs(ours - theirs) <= 1e-12, id + " output " + item["output"].dump() + ": kvbench " +
                                                                         std::to_string(ours) + " reference " + std::to_string(theirs));
    } else if (kind == "stem") {
      const std::string word = item["word"];
      const auto tokens = kvbench::graders::locomo_paper_tokens(word);
      tallies["porter stem vs nltk"].add(tokens == std::vector<std::string>{item["stem"].get<std::string>()},
                                         word + ": kvbench " + json(tokens).dump() + " nltk " + item["stem"].dump());
    } else {
      FAIL("unknown line kind " << kind);
    }
  }
  for (auto& [name, data] : tasks) tallies[name + " sample order"].add(data.next == data.samples.size(), "kvbench has more samples");

  // --auto_frozen: every sample's system_text is the reference's text; token counts as HF tokenizers count.
  for (const auto& system : systems) {
    const std::string name = system["task"], text = system["text"];
    const auto& data = task(name);
    for (const auto& sample : data.samples) {
      const std::string ours = data.task->prompt(sample).system_text;
      tallies[name + " auto_frozen text"].add(ours == text, sample.id + " " + first_difference(ours, text));
    }
    for (const auto& [tokenizer, count] : system["tokens"].items()) {
      const auto ids = kvbench::Tokenizer::load(shared / "tokenizers" / tokenizer).encode(text, true);
      tallies[name + " auto_frozen tokens"].add(ids.size() == count.get<std::size_t>(),
                                                tokenizer + ": kvbench " + std::to_string(ids.size()) + " reference " + count.dump());
    }
  }

  std::ostringstream report;
  std::size_t mismatches = 0;
  for (const auto& [what, tally] : tallies) {
    report << "| " << what << " | " << tally.cases << " cases | " << tally.mismatches << " differ |\n" << tally.examples;
    mismatches += tally.mismatches;
  }
  std::cout << report.str();
  INFO(report.str());
  REQUIRE(tallies.size() >= 20);  // every comparison ran
  CHECK(tallies["math500 verdict (math-verify)"].cases >= 5000);
  CHECK(tallies["locomo-paper score"].cases >= 20000);
  CHECK(tallies["qasper-paper score"].cases >= 10000);
  CHECK(mismatches == 0);
}

TEST_CASE("Protocol::Reference MATH500: the last boxed answer only, and math-verify or a clear error", "[tasks][reference]") {
  using kvbench::graders::reference_boxed_answer;
  CHECK(reference_boxed_answer("\\boxed{1} and \\boxed{ {2} }") == "{2}");
  CHECK_FALSE(reference_boxed_answer("\\boxed{1} and then \\boxed{2").has_value());  // an earlier box does not count
  CHECK_FALSE(reference_boxed_answer("\\fbox{1} \\boxed 2 the answer is 3").has_value());
  CHECK(reference_boxed_answer("\\boxed{\xC2\xA0x\xE2\x80\x83}") == "x");  // Python's strip: U+00A0, U+2003
  const auto task = kvbench::tasks::make_task("math500", Protocol::Reference);
  CHECK(task->should_stop("\\boxed{1}"));
  CHECK_FALSE(task->should_stop("\\boxed{1} \\boxed{"));  // kvbench's own rule stops here; the reference does not
  CHECK(kvbench::tasks::make_task("math500")->should_stop("\\boxed{1} \\boxed{"));
  const kvbench::tasks::Sample sample{"s", {{"id", "s"}, {"answer", "1"}}};
  // Without math-verify: a kvbench::Error that says what to do (a bogus interpreter stands in for a missing one).
  const char* saved = std::getenv("KVBENCH_PYTHON");
  const std::string previous = saved ? saved : "";
  setenv("KVBENCH_PYTHON", "/nonexistent/python", 1);
  const auto fresh = kvbench::tasks::make_task("math500", Protocol::Reference);
  CHECK_THROWS_WITH(fresh->grade(sample, "\\boxed{1}"), Catch::Contains("run scripts/setup.sh or set KVBENCH_PYTHON"));
  const auto total = kvbench::tasks::grade_total(*fresh, sample, "\\boxed{1}", "row");  // graders stay total
  CHECK(total.score == 0.0);
  CHECK(total.details.contains("grading_error"));
  if (saved) setenv("KVBENCH_PYTHON", previous.c_str(), 1); else unsetenv("KVBENCH_PYTHON");
}

TEST_CASE("Protocol::Reference MATH500 grades hostile outputs totally, in bounded time", "[tasks][reference][hostile][peers]") {
  if (!kvbench::testing::peer_available("math_verify")) return;
  const auto task = kvbench::tasks::make_task("math500", Protocol::Reference);
  const kvbench::tasks::Sample sample{"hostile", {{"id", "hostile"}, {"answer", "\\frac{1}{2}"}}};
  const auto repeat = [](const std::string& piece, std::size_t times) {
    std::string text;
    for (std::size_t i = 0; i < times; ++i) text += piece;
    return text;
  };
  // What math-verify's own 5 s alarms cut short (parse gold, parse prediction, verify), and invalid UTF-8.
  const std::vector<std::string> outputs = {
      "\\boxed{" + repeat("1, ", 1 << 18) + "1}", "\\boxed{" + repeat("\\frac{1}{", 50000) + "2" + repeat("}", 50000) + "}",
      "\\boxed{" + repeat("{", 1 << 18) + "1" + repeat("}", 1 << 18) + "}", "\\boxed{\xff\xfe\x80 1/2}", "\\boxed{1/2}"};
  for (const auto& output : outputs) {
    const auto start = std::chrono::steady_clock::now();
    const auto grade = kvbench::tasks::grade_total(*task, sample, output, "hostile");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO(output.substr(0, 60) << " took " << seconds << " s");
    CHECK(grade.score >= 0.0);
    CHECK(grade.score <= 1.0);
    CHECK(seconds < 61.0);  // math-verify's alarms, else MathVerify's read timeout
  }
  CHECK(kvbench::tasks::grade_total(*task, sample, "\\boxed{0.5}", "after").score == 1.0);  // the process survived
  // A verdict later than the read timeout: an error, the hung process killed, a fresh one for the next call.
  kvbench::graders::MathVerify impatient(/*timeout_seconds=*/0.5);
  CHECK(impatient.equal("1", "1"));
  CHECK_THROWS_WITH(impatient.equal(repeat("1, ", 1 << 18) + "1", "1"), Catch::Contains("no reply within"));
  CHECK(impatient.equal("\\frac{2}{4}", "0.5"));
}
