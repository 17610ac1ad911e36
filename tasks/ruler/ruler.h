// RULER (Hsieh et al., 2024, "RULER: What's the Real Context Size of Your Long-Context Language Models?";
// github.com/NVIDIA/RULER): 13 synthetic long-context tasks, generated here from a seed at a target length
// in the model's own tokens, with RULER's templates, needles, haystacks, answer prefixes and scoring.
// Where each piece comes from, and where kvbench differs: tasks/ruler/README.md.
//
// The pieces: a Family makes one sample's text for a haystack `size` (sentences, words or documents);
// samples.cpp finds, per sample, the largest size whose prompt fits the length.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tasks/rng.h"
#include "tasks/task.h"

namespace kvbench::tasks::ruler {

// One sample's text as RULER writes it: `input` is the filled template without the answer prefix; the model
// reads input + answer_prefix (RULER's base template) and is graded against `outputs`.
struct Text {
  std::string input;
  std::string answer_prefix;
  std::vector<std::string> outputs;
  std::vector<std::string> key_texts;  // the inserted needles or chain the answer depends on
};

// What one task of scripts/synthetic.yaml sets.
struct TaskConfig {
  std::string name;                // niah_single_1, …, vt, cwe, fwe, qa_1, qa_2
  std::string family;              // niah, variable_tracking, common_words_extraction, freq_words_extraction, qa
  int tokens_to_generate = 128;    // scripts/data/synthetic/constants.py
  bool match_all = true;           // string_match_all; qa: string_match_part
  // niah
  std::string haystack = "noise";  // noise, essay, needle
  std::string key_type = "words", value_type = "numbers";
  int keys = 1, values = 1, queries = 1;
  std::string dataset;             // qa: squad or hotpotqa
};

// The 13 tasks, in RULER's order; kvbench::Error naming them for an unknown name.
const std::vector<TaskConfig>& task_configs();
const TaskConfig& task_config(const std::string& name);

// What a generated --data names: ruler:TASK[,length=,seed=,samples=,haystack=,essay=,squad=,hotpotqa=]; or
// ruler:data=FILE[,task=TASK]: a RULER-format file (relative to the datasets root), its rows of TASK if given.
struct Spec {
  TaskConfig task;
  bool task_given = false;
  std::filesystem::path data;
  int64_t length = 4096;   // RULER's max_seq_length: prompt tokens + tokens_to_generate stay within it
  uint64_t seed = 0;
  int64_t samples = 100;
  std::filesystem::path essay, squad, hotpotqa;  // files the essay haystack and the QA tasks read
};
// `text` is the spec (the last component of a --data path); `root` is what came before it (the datasets
// root), where the QA files are looked for when the spec names none. The task may come first without a key.
Spec parse_spec(const std::string& text, const std::filesystem::path& root);

// Makes a task's text for a haystack of `size` units (noise lines, essay or list words, documents) from `rng`.
class Family {
 public:
  virtual ~Family() = default;
  // `index`: the sample's number (the QA tasks ask question `index`).
  virtual Text make(int64_t size, int64_t index, SplitMix64& rng) const = 0;
  // RULER's `incremental`: the smallest size it tries.
  virtual int64_t smallest_size() const = 0;
  // Sizes above this make no longer text (an essay or a QA set used up); 0: unbounded.
  virtual int64_t largest_size() const { return 0; }
};
std::unique_ptr<Family> make_family(const Spec& spec, const TokenCounter& count_tokens);

// `count` texts of `family` at `length`: text i drawn from its own seed (`stream`, i) with the largest haystack
// whose prompt + tokens_to_generate stays within the length.
struct FittedText {
  Text text;
  int64_t length = 0;  // its prompt's tokens + tokens_to_generate
};
std::vector<FittedText> fitted_texts(const Family& family, const std::string& stream, int64_t length,
                                     int tokens_to_generate, int64_t count, const TokenCounter& count_tokens);

// A sample of RULER's fields: record {id, task, outputs, length, max_length, key_texts}, inputs {input,
// answer_prefix}.
Sample to_sample(const std::string& id, const std::string& task, Text text, int64_t length, int64_t max_length);

// The samples of `spec`: sample i is made from its own seed (spec seed, task, length, i) at the largest
// size that fits, so it depends on the spec, i and the tokenizer, not on the sample count.
std::vector<Sample> generate_samples(const Spec& spec, const TokenCounter& count_tokens);

// Reads RULER-format samples: prepare.py's JSONL (input, outputs, answer_prefix), lm-evaluation-harness's
// (gen_prefix instead of answer_prefix), or kvpress's published set (simonjegou/ruler: context, question,
// answer_prefix, answer, task) as JSON lines; kvbench::Error naming the file and line otherwise. Rows that
// name no task take `directory` when it is one of RULER's (prepare.py writes <task>/validation.jsonl).
std::vector<Sample> read_samples(const std::filesystem::path& path, const std::string& directory);

// `prompt` (input + answer prefix) as kvpress's RULER set splits it (evaluation/benchmarks/ruler/
// create_huggingface_dataset.py): the context ends where the task family's question last begins, the answer
// prefix begins at the first of its answer pattern after that. nullopt for a task of no family it knows, or a
// prompt without the patterns.
std::optional<PromptParts> kvpress_parts(const std::string& prompt, const std::string& task);

// RULER's scoring (scripts/eval): the prediction stripped, control characters made newlines, then each
// reference searched case-insensitively; the fraction found (match_all) or whether any is (part).
double string_match(const std::string& prediction, const std::vector<std::string>& references, bool match_all);
std::string postprocess_prediction(std::string_view prediction);

// Haystack and needle pieces, shared with the `niah` task.
extern const char* const kNoise;   // RULER's noise line (five sentences)
// `sentences` noise sentences as noise lines: whole lines, then the first sentences of one more. RULER counts
// whole lines; sentences let a haystack come within 2% of a short length (a line is ~23 tokens).
std::vector<std::string> noise_lines(int64_t sentences);
extern const char* const kNeedle;  // "One of the special magic {type_needle_v} for {key} is: {value}."
std::string needle_sentence(const std::string& type_v, const std::string& key, const std::string& value);
std::string random_needle(const std::string& type, SplitMix64& rng);  // numbers, words or uuids
// An essay's words (whitespace-separated), for the essay haystack; kvbench::Error naming the file.
std::vector<std::string> essay_words(const std::filesystem::path& file);
// The first `count` words of the essay (repeated when short), split into sentences.
std::vector<std::string> essay_sentences(const std::vector<std::string>& words, int64_t count);
// RULER's needle depths: 0..100 in 40 steps, rounded.
const std::vector<int>& depths();

// kvbench's word lists (words.cpp).
const std::vector<std::string>& adjectives();
const std::vector<std::string>& nouns();
std::vector<std::string> word_pool(std::size_t count);

}  // namespace kvbench::tasks::ruler
