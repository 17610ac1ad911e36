// RULER and niah: generated samples are deterministic per seed and tokenizer, reach the length (prompt +
// tokens to generate within [0.98, 1] of it, counted again here with the real Qwen3 and Llama-3 tokenizers),
// hold their answers, and their references grade correct; RULER-format files read; scoring as RULER's. And
// against lm-evaluation-harness's RULER (tests/peers/reference_ruler.py): its templates, answer prefixes and
// task settings for kvbench's prompts, and its scores, on kvbench's samples and on its own.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <sstream>

#include "task_test_util.h"
#include "tasks/ruler/ruler.h"
#include "tokenizer/tokenizer.h"

using kvbench::tasks::make_task;
using kvbench::tasks::Sample;
using kvbench::testing::write_temp;
namespace ruler = kvbench::tasks::ruler;

namespace {

kvbench::tasks::TokenCounter counter(const kvbench::Tokenizer& tokenizer) {
  return [&tokenizer](std::string_view text) { return static_cast<int64_t>(tokenizer.encode(text, false).size()); };
}

// A small SQuAD v2.0-layout file: 12 articles of 3 paragraphs, one answerable and one unanswerable question each.
std::filesystem::path squad_fixture() {
  kvbench::tasks::json data = {{"data", kvbench::tasks::json::array()}};
  for (int a = 0; a < 12; ++a) {
    kvbench::tasks::json article = {{"title", fmt::format("Article {}", a)}, {"paragraphs", kvbench::tasks::json::array()}};
    for (int p = 0; p < 3; ++p) {
      const std::string answer = fmt::format("Keeper{}x{}", a, p);
      article["paragraphs"].push_back(
          {{"context", fmt::format("The lighthouse number {} of district {} was kept by {} for many long years, "
                                   "through storms and calm weather alike.", p, a, answer)},
           {"qas", {{{"question", fmt::format("Who kept lighthouse {} of district {}?", p, a)},
                     {"id", fmt::format("q{}_{}", a, p)},
                     {"answers", {{{"text", answer}, {"answer_start", 0}}}},
                     {"is_impossible", false}},
                    {{"question", "Who painted it?"}, {"id", fmt::format("u{}_{}", a, p)}, {"answers", kvbench::tasks::json::array()},
                     {"is_impossible", true}}}}});
    }
    data["data"].push_back(article);
  }
  return write_temp("ruler_squad.json", data.dump());
}

// The same layout for HotpotQA (distractor setting): 30 questions of two documents each.
std::filesystem::path hotpotqa_fixture() {
  kvbench::tasks::json data = kvbench::tasks::json::array();
  for (int q = 0; q < 30; ++q)
    data.push_back({{"question", fmt::format("Which bridge did crew {} build?", q)},
                    {"answer", fmt::format("Bridge{}", q)},
                    {"context", kvbench::tasks::json::array(
                                    {kvbench::tasks::json::array({fmt::format("Crew {}", q),
                                                                  {fmt::format("Crew {} is a team. ", q), "It builds."}}),
                                     kvbench::tasks::json::array({fmt::format("Bridge{}", q),
                                                                  {fmt::format("Bridge{} was built by crew {}.", q, q)}})})}});
  return write_temp("ruler_hotpotqa.json", data.dump());
}

std::string spec_for(const std::string& task, int64_t length, int samples, uint64_t seed = 0) {
  return fmt::format("ruler:{},length={},samples={},seed={},essay={},squad={},hotpotqa={}", task, length, samples, seed,
                     (kvbench::testing::shared_dir() / "DESIGN.md").string(), squad_fixture().string(),
                     hotpotqa_fixture().string());
}

}  // namespace

TEST_CASE("ruler: every generated task reaches its length, holds its answers and grades its references correct",
          "[ruler]") {
  const auto task = make_task("ruler");
  for (const std::string name : {"qwen3", "llama3"}) {
    KVBENCH_REQUIRE_SHARED("tokenizers/" + name);
    const auto tokenizer = kvbench::Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers" / name);
    for (const int64_t length : {1024, 16384}) {
      for (const auto& config : ruler::task_configs()) {
        const std::string spec = spec_for(config.name, length, length > 4096 ? 2 : 3);
        INFO(name << " " << spec);
        const auto samples = task->load(spec, counter(tokenizer));
        REQUIRE(samples.size() == (length > 4096 ? 2u : 3u));
        for (const Sample& sample : samples) {
          const auto prompt = task->prompt(sample);
          const int64_t tokens = tokenizer.encode(prompt.raw, false).size() + config.tokens_to_generate;
          CHECK(sample.record["length"] == tokens);
          CHECK(tokens <= length);
          // Within 2%, except where one haystack unit is larger than that: a SQuAD document, a distractor needle
          // of uuids (~45-60 tokens) at 1K. Like RULER, the haystack then stays up to one unit short.
          const bool coarse = length < 4096 && (config.family == "qa" || config.name == "niah_multikey_3");
          CHECK(tokens >= (coarse ? 0.94 : 0.98) * length);
          const auto outputs = sample.record["outputs"].get<std::vector<std::string>>();
          REQUIRE(!outputs.empty());
          for (const auto& output : outputs) CHECK(prompt.raw.find(output) != std::string::npos);
          CHECK(task->grade(sample, " " + fmt::format("{}", fmt::join(outputs, ", ")) + ".").score == 1.0);
          CHECK(task->grade(sample, "I do not know.").score == 0.0);
        }
        CHECK(task->defaults(spec).max_new_tokens == config.tokens_to_generate);
      }
    }
  }
}

TEST_CASE("ruler: samples depend on the seed and the tokenizer only, sample i not on the sample count", "[ruler]") {
  KVBENCH_REQUIRE_SHARED("tokenizers/qwen3");
  const auto tokenizer = kvbench::Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers" / "qwen3");
  const auto task = make_task("ruler");
  for (const std::string name : {"niah_multikey_3", "vt", "fwe"}) {
    const auto a = task->load(spec_for(name, 2048, 3), counter(tokenizer));
    const auto b = task->load(spec_for(name, 2048, 4), counter(tokenizer));
    const auto c = task->load(spec_for(name, 2048, 3, 1), counter(tokenizer));
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].inputs == b[i].inputs);
      CHECK(a[i].record == b[i].record);
      CHECK(a[i].inputs != c[i].inputs);
    }
  }
}

TEST_CASE("ruler: prompts follow RULER's templates", "[ruler]") {
  KVBENCH_REQUIRE_SHARED("tokenizers/qwen3");
  const auto tokenizer = kvbench::Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers" / "qwen3");
  const auto task = make_task("ruler");
  const auto single = task->load("ruler:niah_single_1,length=1024,samples=1", counter(tokenizer)).at(0);
  const std::string key = single.record["outputs"][0];
  const std::string raw = task->prompt(single).raw;
  CHECK_THAT(raw, Catch::StartsWith("A special magic number is hidden within the following text. Make sure to memorize "
                                    "it. I will quiz you about the number afterwards.\nThe grass is green."));
  CHECK_THAT(raw, Catch::Contains("One of the special magic numbers for ") && Catch::Contains(" is: " + key + "."));
  CHECK_THAT(raw, Catch::Matches("(.|\n)*\nWhat is the special magic number for [a-z]+-[a-z]+ mentioned in the provided "
                                 "text\\? The special magic number for [a-z]+-[a-z]+ mentioned in the provided text is$"));
  const auto multi = task->load("ruler:niah_multiquery,length=1024,samples=1,haystack=noise", counter(tokenizer)).at(0);
  CHECK(multi.record["outputs"].size() == 4);
  CHECK_THAT(task->prompt(multi).raw, Catch::StartsWith("Some special magic numbers are hidden") &&
                                          Catch::Contains("What are all the special magic numbers for ") &&
                                          Catch::Contains(", and ") && Catch::EndsWith("mentioned in the provided text are"));
  const auto vt = task->load("ruler:vt,length=1024,samples=1", counter(tokenizer)).at(0);
  CHECK_THAT(task->prompt(vt).raw,
             Catch::Matches("Memorize and track the chain\\(s\\) of variable assignment hidden in the following text.\n\n"
                            "(.|\n)*they are:  [A-Z]{3} [A-Z]{3} [A-Z]{3} [A-Z]{3} [A-Z]{3}\n\nMemorize(.|\n)*Question: Find "
                            "all variables that are assigned the value [0-9]{5} in the text above. Answer: According to "
                            "the chain\\(s\\) of variable assignment in the text above, 5 variables are assigned the "
                            "value [0-9]{5}, they are: "));
  const auto uuid = task->load("ruler:niah_multikey_3,length=1024,samples=1", counter(tokenizer)).at(0);
  CHECK_THAT(uuid.record["outputs"][0].get<std::string>(),
             Catch::Matches("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  CHECK_THROWS_WITH(task->load("ruler:niah_single_2,length=1024", counter(tokenizer)),
                    Catch::Contains("essay=PATH") && Catch::Contains("haystack=noise"));
  CHECK_THROWS_WITH(task->load("ruler:niah_single_1,length=1024"), Catch::Contains("tokenizer"));
  CHECK_THROWS_WITH(task->load("ruler:nope", counter(tokenizer)), Catch::Contains("niah_single_1") && Catch::Contains("qa_2"));
  CHECK_THROWS_WITH(task->load("ruler:vt,length=200", counter(tokenizer)), Catch::Contains("too short"));
}

TEST_CASE("ruler: RULER's scoring (string_match_all, string_match_part)", "[ruler]") {
  CHECK(ruler::string_match("  The numbers are 123 and 456.", {"123", "456", "789"}, true) == Approx(2.0 / 3));
  CHECK(ruler::string_match("the ANSWER is Paris", {"paris", "London"}, false) == 1.0);
  CHECK(ruler::string_match("nothing", {"paris", "London"}, false) == 0.0);
  CHECK(ruler::string_match("ab\x01" "cd", {"ab\ncd"}, true) == 1.0);  // control characters become newlines
  CHECK(ruler::postprocess_prediction("\t x \x02 y \n") == "x \n y");
}

TEST_CASE("ruler: RULER-format files: prepare.py's, lm-evaluation-harness's and kvpress's rows", "[ruler]") {
  const auto task = make_task("ruler");
  const auto dir = kvbench::testing::scratch_path("ruler_data") / "qa_1";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "validation.jsonl")
      << R"({"index": 0, "input": "Q?", "outputs": ["Paris", "paris city"], "length": 40, "answer_prefix": " Answer:"})"
      << "\n";
  const auto prepared = task->load(dir / "validation.jsonl");
  REQUIRE(prepared.size() == 1);
  CHECK(task->prompt(prepared[0]).raw == "Q? Answer:");
  CHECK(prepared[0].record["task"] == "qa_1");
  CHECK(task->grade(prepared[0], "It is Paris.").score == 1.0);  // QA: any reference
  const auto lm_eval = write_temp("ruler_lm_eval.jsonl",
                                  R"({"index": 3, "input": "In?", "outputs": ["a", "b"], "gen_prefix": "The answer is"})");
  const auto lm = task->load(lm_eval);
  CHECK(task->prompt(lm[0]).raw == "In? The answer is");
  CHECK(task->grade(lm[0], "a").score == 0.5);
  const auto kvpress = write_temp("ruler_kvpress.jsonl",
                                  R"({"context": "C.", "question": " Q?", "answer_prefix": " A:", "answer": ["x"], "task": "niah_single_1"})");
  const auto kp = task->load(kvpress);
  CHECK(task->prompt(kp[0]).raw == "C. Q? A:");
  CHECK(kp[0].record["task"] == "niah_single_1");
  // A spec names a file under the datasets root, all of it or one task's rows (how a recipe names kvpress's set).
  const auto root = kvbench::testing::scratch_path("ruler_root");
  std::filesystem::create_directories(root / "ruler");
  std::ofstream(root / "ruler" / "kvpress.jsonl")
      << R"({"context": "C.", "question": " Q?", "answer_prefix": " A:", "answer": ["x"], "task": "niah_single_1"})" << "\n"
      << R"({"context": "D.", "question": " R?", "answer_prefix": " A:", "answer": ["y"], "task": "qa_1"})" << "\n";
  CHECK(task->load(root / "ruler:data=ruler/kvpress.jsonl").size() == 2);
  const auto qa = task->load(root / "ruler:data=ruler/kvpress.jsonl,task=qa_1");
  REQUIRE(qa.size() == 1);
  CHECK(task->prompt(qa[0]).raw == "D. R? A:");
  CHECK(task->label(root / "ruler:data=ruler/kvpress.jsonl,task=qa_1") == "ruler-kvpress-qa_1");
  CHECK_THAT(kvbench::testing::load_error(*task, "ruler_bad.jsonl", R"({"input": "x"})"), Catch::Contains("outputs"));
  CHECK_THAT(kvbench::testing::load_error(*task, "ruler_bad2.jsonl", "[1]\n"), Catch::Contains("object"));
}

TEST_CASE("ruler: the context, question and answer prefix kvpress's pipeline reads", "[ruler]") {
  using Parts = kvbench::tasks::PromptParts;
  const auto parts_equal = [](const std::optional<Parts>& got, const Parts& want) {
    REQUIRE(got);
    CHECK(got->context == want.context);
    CHECK(got->question == want.question);
    CHECK(got->answer_prefix == want.answer_prefix);
  };
  // kvpress's RULER set (create_huggingface_dataset.py), by hand: the context ends where the family's question
  // last begins (a haystack may quote it), the answer prefix begins at the first answer pattern after it.
  const std::string haystack = "Noise. What is the special magic number for x? is quoted here.\n";
  parts_equal(ruler::kvpress_parts(haystack + "What is the special magic number for k mentioned in the provided "
                                   "text? The special magic number for k mentioned in the provided text is",
                                   "niah_single_1"),
              {haystack, "What is the special magic number for k mentioned in the provided text? ",
               "The special magic number for k mentioned in the provided text is"});
  parts_equal(ruler::kvpress_parts("Docs.\nWhat are all the special magic numbers for k? The special magic numbers "
                                   "for k are", "niah_multivalue"),
              {"Docs.\n", "What are all the special magic numbers for k? ", "The special magic numbers for k are"});
  parts_equal(ruler::kvpress_parts("Text.\nQuestion: Find all variables that are assigned the value 7 in the text "
                                   "above. Answer: According to", "vt"),
              {"Text.\n", "Question: Find all variables that are assigned the value 7 in the text above. ",
               "Answer: According to"});
  parts_equal(ruler::kvpress_parts("D1. Answer the question based on the given documents. Only give me the answer."
                                   "\n\nQuestion: Who? Answer:", "qa_2"),
              {"D1. ", "Answer the question based on the given documents. Only give me the answer.\n\nQuestion: Who? ",
               "Answer:"});
  CHECK_FALSE(ruler::kvpress_parts("What is the special magic number? The special magic", "ruler"));  // no family
  CHECK_FALSE(ruler::kvpress_parts("no question here", "niah_single_1"));
  // Rows of kvpress's set keep their own split; generated samples are split as kvpress split RULER's.
  const auto task = make_task("ruler");
  const auto kvpress = write_temp("ruler_kvpress_parts.jsonl",
                                  R"({"context": "C. What is the special magic", "question": " Q?", "answer_prefix": " A:", "answer": ["x"], "task": "niah_single_1"})");
  parts_equal(task->prompt(task->load(kvpress)[0]).parts, {"C. What is the special magic", " Q?", " A:"});
  const auto count = [](std::string_view text) { return static_cast<int64_t>(text.size() / 4); };
  for (const Sample& sample : task->load("ruler:niah_single_1,length=600,samples=2", count)) {
    const auto prompt = task->prompt(sample);
    REQUIRE(prompt.parts);
    CHECK(prompt.parts->context + prompt.parts->question + prompt.parts->answer_prefix == prompt.raw);
    CHECK(prompt.parts->question.rfind("What is the special magic", 0) == 0);
    CHECK(prompt.parts->answer_prefix.rfind("The special magic", 0) == 0);
  }
}

TEST_CASE("niah: a depth x length grid, the needle at its depth, references correct", "[ruler]") {
  KVBENCH_REQUIRE_SHARED("tokenizers/llama3");
  const auto tokenizer = kvbench::Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers" / "llama3");
  const auto task = make_task("niah");
  const auto samples = task->load("niah:lengths=512+1024,depths=0+50+100,samples=2", counter(tokenizer));
  REQUIRE(samples.size() == 12);
  for (const Sample& sample : samples) {
    INFO(sample.id);
    const std::string raw = task->prompt(sample).raw;
    const int64_t length = sample.record["max_length"], tokens = tokenizer.encode(raw, false).size() + 32;
    CHECK(tokens <= length);
    CHECK(tokens >= 0.98 * length);
    const std::string needle = sample.record["key_texts"][0];
    const double first = raw.find("afterwards.\n"), last = raw.rfind("\nWhat is"), at = raw.find(needle);
    const double depth = (at - first) / (last - first - needle.size());
    CHECK(depth == Approx(sample.record["depth"].get<double>() / 100).margin(0.05));
    CHECK(task->grade(sample, sample.record["outputs"][0].get<std::string>()).score == 1.0);
  }
  CHECK(samples[0].id == "s0/L512/d0/0");
  CHECK(samples[5].id == "s0/L512/d100/1");
}

namespace {

std::vector<kvbench::tasks::json> peer_lines(const std::string& mode, const std::string& argument) {
  const auto script = kvbench::testing::source_dir() / "tests/peers/reference_ruler.py";
  const std::string output = kvbench::testing::run_command("'" + kvbench::testing::peer_python() + "' '" +
                                                           script.string() + "' " + mode + " '" + argument + "'");
  std::vector<kvbench::tasks::json> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) lines.push_back(kvbench::tasks::json::parse(line));
  return lines;
}

}  // namespace

TEST_CASE("ruler: kvbench's prompts follow lm-evaluation-harness's RULER templates, and score as it does", "[ruler][peer]") {
  KVBENCH_REQUIRE_SHARED("tokenizers/qwen3");
  if (!kvbench::testing::peer_available("wonderwords")) return;
  const auto tokenizer = kvbench::Tokenizer::load(kvbench::testing::shared_dir() / "tokenizers" / "qwen3");
  const auto task = make_task("ruler");
  std::vector<Sample> samples;
  std::string cases;
  for (const auto& config : ruler::task_configs())
    for (const Sample& sample : task->load(spec_for(config.name, 2048, 2), counter(tokenizer))) {
      cases += kvbench::tasks::json{{"task", config.name},
                                    {"input", sample.inputs["input"]},
                                    {"answer_prefix", sample.inputs["answer_prefix"]},
                                    {"outputs", sample.record["outputs"]},
                                    {"config",
                                     {{"haystack", config.haystack}, {"key_type", config.key_type},
                                      {"value_type", config.value_type}, {"keys", config.keys},
                                      {"values", config.values}, {"queries", config.queries}}}}
                   .dump() +
               "\n";
      samples.push_back(sample);
    }
  const auto results = peer_lines("check", write_temp("ruler_cases.jsonl", cases).string());
  REQUIRE(results.size() == samples.size());
  int64_t scored = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    INFO(r["task"].get<std::string>() << " " << samples[i].id);
    CHECK(r["template"] == true);
    CHECK(r["prefix"] == (r["task"] != "vt"));  // vt: lm_eval writes "assgined", RULER's own code "assigned"
    if (r["task"] == "vt") CHECK(r["prefix_with_lm_eval_spelling"] == true);
    if (r.contains("config")) CHECK(r["config"] == true);
    for (std::size_t p = 0; p < r["predictions"].size(); ++p, ++scored)
      CHECK(task->grade(samples[i], r["predictions"][p].get<std::string>()).score == r["scores"][p].get<double>());
  }
  CHECK(scored == 10 * 26);
}

TEST_CASE("ruler: lm-evaluation-harness's own RULER samples read as they are and score as it scores them",
          "[ruler][peer]") {
  KVBENCH_REQUIRE_SHARED("tokenizers/qwen3");
  if (!kvbench::testing::peer_available("wonderwords")) return;
  const auto task = make_task("ruler");
  const auto lines = peer_lines("samples", (kvbench::testing::shared_dir() / "tokenizers" / "qwen3").string());
  REQUIRE(lines.size() == 12);  // 6 tasks x 2
  for (const auto& line : lines) {
    INFO(line["task"].get<std::string>());
    const auto file = write_temp("ruler_lm_eval_sample.jsonl", line.dump());
    const Sample sample = task->load(file).at(0);
    CHECK(task->prompt(sample).raw == line["input"].get<std::string>() + " " + line["gen_prefix"].get<std::string>());
    for (std::size_t p = 0; p < line["predictions"].size(); ++p)
      CHECK(task->grade(sample, line["predictions"][p].get<std::string>()).score == line["scores"][p].get<double>());
  }
}
