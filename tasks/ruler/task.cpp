// The `ruler` task: RULER's 13 tasks generated from a spec at a length in the model's tokens,
//   ruler:TASK[,length=4096][,seed=0][,samples=100][,haystack=noise|essay|needle][,essay=FILE][,squad=FILE][,hotpotqa=FILE]
// or RULER-format samples read from a file (--data PATH, or ruler:data=PATH[,task=TASK] relative to the
// datasets root, so a recipe can name kvpress's set). The prompt is RULER's base template: the input,
// then the answer prefix the model continues; grading is RULER's string match.
#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"
#include "tasks/ruler/families.h"
#include "tasks/task_support.h"

namespace kvbench::tasks::ruler {

namespace {

TaskConfig niah(std::string name, std::string haystack, std::string key_type, std::string value_type, int keys,
                int values, int queries) {
  TaskConfig c{std::move(name), "niah", 128, true, std::move(haystack), std::move(key_type), std::move(value_type)};
  c.keys = std::max(keys, queries);  // niah.py: num_needle_k = max(num_needle_k, num_needle_q)
  c.values = values;
  c.queries = queries;
  return c;
}

TaskConfig family(std::string name, std::string family, int tokens_to_generate, bool match_all = true,
                  std::string dataset = "") {
  TaskConfig c{std::move(name), std::move(family), tokens_to_generate, match_all};
  c.dataset = std::move(dataset);
  return c;
}

// kvpress's QUESTION_PATTERNS and ANSWER_PATTERNS by family (the task's name up to its first "_"); niah's
// question is "What (?:is|are all) the special magic".
struct SplitPatterns {
  std::vector<std::string> questions;
  std::string answer;
};

const SplitPatterns* split_patterns(const std::string& task) {
  static const std::map<std::string, SplitPatterns> patterns = {
      {"niah", {{"What is the special magic", "What are all the special magic"}, "The special magic"}},
      {"vt", {{"Question: Find all variables that are assigned the value"}, "Answer:"}},
      {"cwe", {{"Question: What are the 10 most common words in the above list?"}, "Answer:"}},
      {"fwe", {{"Question: Do not provide any explanation."}, "Answer:"}},
      {"qa", {{"Answer the question based on the given documents."}, "Answer:"}},
  };
  const auto found = patterns.find(task.substr(0, task.find('_')));
  return found == patterns.end() ? nullptr : &found->second;
}

}  // namespace

std::optional<PromptParts> kvpress_parts(const std::string& prompt, const std::string& task) {
  const SplitPatterns* patterns = split_patterns(task);
  if (!patterns) return std::nullopt;
  std::size_t question = std::string::npos;
  for (const std::string& pattern : patterns->questions)
    if (const std::size_t at = prompt.rfind(pattern); at != std::string::npos)
      question = question == std::string::npos ? at : std::max(question, at);
  if (question == std::string::npos) return std::nullopt;
  const std::size_t answer = prompt.find(patterns->answer, question);
  if (answer == std::string::npos) return std::nullopt;
  return PromptParts{prompt.substr(0, question), prompt.substr(question, answer - question), prompt.substr(answer)};
}

// scripts/synthetic.yaml and scripts/data/synthetic/constants.py (tokens to generate), in that order.
const std::vector<TaskConfig>& task_configs() {
  static const std::vector<TaskConfig> configs = {
      niah("niah_single_1", "noise", "words", "numbers", 1, 1, 1),
      niah("niah_single_2", "essay", "words", "numbers", 1, 1, 1),
      niah("niah_single_3", "essay", "words", "uuids", 1, 1, 1),
      niah("niah_multikey_1", "essay", "words", "numbers", 4, 1, 1),
      niah("niah_multikey_2", "needle", "words", "numbers", 1, 1, 1),
      niah("niah_multikey_3", "needle", "uuids", "uuids", 1, 1, 1),
      niah("niah_multivalue", "essay", "words", "numbers", 1, 4, 1),
      niah("niah_multiquery", "essay", "words", "numbers", 1, 1, 4),
      family("vt", "variable_tracking", 30),
      family("cwe", "common_words_extraction", 120),
      family("fwe", "freq_words_extraction", 50),
      family("qa_1", "qa", 32, /*match_all=*/false, "squad"),
      family("qa_2", "qa", 32, /*match_all=*/false, "hotpotqa"),
  };
  return configs;
}

const TaskConfig& task_config(const std::string& name) {
  for (const auto& config : task_configs())
    if (config.name == name) return config;
  std::vector<std::string> names;
  for (const auto& config : task_configs()) names.push_back(config.name);
  fail("ruler: unknown task \"{}\" (one of {})", name, fmt::join(names, ", "));
}

Spec parse_spec(const std::string& text, const std::filesystem::path& root) {
  // "ruler:niah_single_1,length=4096": the task may come first without its key.
  std::string keyed = text;
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    const auto end = text.find(',', colon);
    const std::string first = text.substr(colon + 1, end == std::string::npos ? end : end - colon - 1);
    if (!first.empty() && first.find('=') == std::string::npos) keyed.insert(colon + 1, "task=");
  }
  Spec spec;
  const GeneratedSpec generated = parse_generated_spec(keyed, "ruler", spec.samples);
  const SpecItems& items = generated.items;
  std::vector<std::string> names;
  for (const auto& config : task_configs()) names.push_back(config.name);
  spec.task_given = items.text("task").has_value();
  spec.task = task_config(items.choice("task", "niah_single_1", names));
  spec.length = items.integer("length", spec.length, 64, 10'000'000);
  spec.seed = generated.seed;
  spec.samples = generated.samples;
  if (spec.task.family == "niah") spec.task.haystack = items.choice("haystack", spec.task.haystack, {"noise", "essay", "needle"});
  const auto file = [&](const char* key, const std::filesystem::path& fallback) {
    const auto given = items.text(key);
    return given ? std::filesystem::path(*given) : fallback;
  };
  spec.data = file("data", "");
  if (!spec.data.empty() && spec.data.is_relative()) spec.data = root / spec.data;
  spec.essay = file("essay", "");
  spec.squad = file("squad", root / "squad" / "dev-v2.0.json");
  spec.hotpotqa = file("hotpotqa", root / "hotpotqa" / "hotpot_dev_distractor_v1.json");
  items.check_all_read();
  if (spec.samples * spec.length > 2'000'000'000)
    fail("ruler spec \"{}\": samples × length must be at most 2e9 tokens", text);
  return spec;
}

std::unique_ptr<Family> make_family(const Spec& spec, const TokenCounter& count_tokens) {
  const TaskConfig& c = spec.task;
  if (c.family == "niah") return make_niah_family(c, spec);
  if (c.family == "variable_tracking") return make_variable_tracking_family(spec, count_tokens);
  if (c.family == "common_words_extraction") return make_common_words_family(spec);
  if (c.family == "freq_words_extraction") return make_frequent_words_family(spec);
  return make_qa_family(c, spec);
}

namespace {

// The spec of a --data that names one (with the datasets root before it), nullopt for a file.
std::optional<Spec> spec_of(const std::filesystem::path& data) {
  const auto found = spec_in_path(data, "ruler");
  if (!found) return std::nullopt;
  return parse_spec(found->spec, found->root);
}

class Ruler : public Task {
 public:
  std::string name() const override { return "ruler"; }
  std::string default_dataset() const override { return "ruler:niah_single_1,length=4096"; }
  bool reads_dataset() const override { return false; }  // a spec, or a file it reads itself

  std::vector<Sample> load(const std::filesystem::path& path) const override {
    if (const auto found = spec_in_path(path, "ruler")) {
      if (const Spec spec = parse_spec(found->spec, found->root); !spec.data.empty()) return file_samples(spec);
      fail("ruler: {} is sized in the model's tokens, so it needs the model's tokenizer to be generated", found->spec);
    }
    return read_samples(path, path.parent_path().filename().string());
  }

  std::vector<Sample> load(const std::filesystem::path& path, const TokenCounter& count_tokens) const override {
    const auto spec = spec_of(path);
    if (spec && !spec->data.empty()) return file_samples(*spec);
    if (!spec || !count_tokens) return load(path);
    return generate_samples(*spec, count_tokens);
  }

  Prompt prompt(const Sample& sample) const override {
    Prompt prompt;
    const std::string input = input_string(sample, "input");
    prompt.raw = input + input_string(sample, "answer_prefix");
    prompt.messages = {{"user", input}};
    if (const auto at = sample.inputs.find("question_at"); at != sample.inputs.end())
      prompt.parts = PromptParts{input.substr(0, *at), input.substr(*at), input_string(sample, "answer_prefix")};
    else
      prompt.parts = kvpress_parts(prompt.raw, sample.record.value("task", ""));
    return prompt;
  }

  Grade grade(const Sample& sample, std::string_view output) const override {
    const auto outputs = sample.record.find("outputs");
    if (outputs == sample.record.end() || !outputs->is_array() || outputs->empty())
      fail("sample {} (record): missing list \"outputs\"", sample.id);
    const std::vector<std::string> references = *outputs;
    Grade grade;
    const std::string prediction = postprocess_prediction(output);
    if (!prediction.empty()) grade.pred = prediction;
    grade.score = string_match(prediction, references, match_all(sample));
    return grade;
  }

  std::vector<std::string> key_texts(const Sample& sample) const override {
    return sample.record.value("key_texts", std::vector<std::string>{});
  }

  std::vector<std::filesystem::path> files_read(const std::filesystem::path& data) const override {
    const auto spec = spec_of(data);
    if (!spec) return {data};
    if (!spec->data.empty()) return {spec->data};
    std::vector<std::filesystem::path> files;
    if (spec->task.family == "qa") files.push_back(spec->task.dataset == "squad" ? spec->squad : spec->hotpotqa);
    if (spec->task.family == "niah" && spec->task.haystack == "essay") files.push_back(spec->essay);
    return files;
  }

  std::string label(const std::filesystem::path& data) const override {
    const auto spec = spec_of(data);
    if (!spec) return name();
    if (!spec->data.empty())
      return fmt::format("ruler-{}{}", spec->data.stem().string(), spec->task_given ? "-" + spec->task.name : "");
    return fmt::format("ruler-{}-{}", spec->task.name, spec->length);
  }

  DecodingDefaults defaults() const override { return {/*max_new_tokens=*/128}; }
  // A generated spec: its task's tokens to generate; a file: each row its own (max_new_tokens).
  DecodingDefaults defaults(const std::filesystem::path& data) const override {
    const auto spec = spec_of(data);
    return spec && spec->data.empty() ? DecodingDefaults{spec->task.tokens_to_generate} : DecodingDefaults{0};
  }
  // The row's max_new_tokens (kvpress's set), else its task's tokens to generate (RULER's constants), else 128.
  int64_t max_new_tokens(const Sample& sample) const override {
    if (const auto own = sample.inputs.find("max_new_tokens"); own != sample.inputs.end()) return own->get<int64_t>();
    const std::string task = sample.record.value("task", "");
    for (const auto& config : task_configs())
      if (config.name == task) return config.tokens_to_generate;
    return defaults().max_new_tokens;
  }

 private:
  // A spec's file: its rows, or those of its task.
  static std::vector<Sample> file_samples(const Spec& spec) {
    std::vector<Sample> samples = read_samples(spec.data, spec.data.parent_path().filename().string());
    if (spec.task_given)
      samples.erase(std::remove_if(samples.begin(), samples.end(),
                                   [&](const Sample& s) { return s.record.value("task", "") != spec.task.name; }),
                    samples.end());
    if (samples.empty()) fail("{}: no rows of task {}", spec.data.string(), spec.task.name);
    return samples;
  }

  // The QA tasks (and kvpress's qa rows) score whether any reference is found; the others, the fraction found.
  static bool match_all(const Sample& sample) {
    const std::string task = sample.record.value("task", std::string());
    return task.rfind("qa", 0) != 0;
  }
};

}  // namespace

}  // namespace kvbench::tasks::ruler

namespace kvbench::tasks {
std::unique_ptr<Task> make_ruler_task() { return std::make_unique<ruler::Ruler>(); }
}  // namespace kvbench::tasks
