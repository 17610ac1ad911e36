// A benchmark: load samples, build the prompt, decide when to stop, extract and grade the answer.
// A task knows nothing of models or policies; the runner joins them.
#pragma once
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/chat.h"

namespace kvbench::tasks {

using json = nlohmann::json;

struct Sample {
  std::string id;  // stable within the dataset (e.g. MATH500 unique_id, "conv-26/q17")
  json record;     // the fields grading needs (gold answer, options, category, ...); stored with results
  // What prompt() reads (problem text, documents, options). NOT stored with results: some datasets must
  // not be written out in plain text (GPQA), and long documents need not be copied into every result.
  json inputs = json::object();
};

// A prompt as kvpress's pipeline reads it (kvpress/pipeline.py): a context, compressed, then a question and
// the answer's prefix (RULER's: context + question + answer_prefix is its raw prompt).
struct PromptParts {
  std::string context, question, answer_prefix;
};

struct Prompt {
  std::string raw;           // the reference implementation's raw prompt (no chat template)
  Conversation messages;     // chat mode: system + user messages for the model's chat template
  std::string system_text;   // its token length is the `auto` frozen prefix
  std::optional<PromptParts> parts;  // tasks with a context and a question (--pipeline kvpress)
};

struct Grade {
  std::optional<std::string> pred;  // extracted prediction; nullopt = pred=None
  double score = 0.0;               // 0..1 (accuracy or F1)
  json details = json::object();    // task-specific extras (e.g. per-reference F1, category)
};

struct DecodingDefaults {
  int max_new_tokens = 256;  // 0: each sample's own (Task::max_new_tokens)
  double temperature = 0.0;  // 0 = greedy
  double top_p = 1.0;
  int rollouts = 1;          // multi-rollout tasks report pass@1 as the mean over rollouts
};

// A text's length in the model's tokens (no special tokens added): what tasks sized in the model's tokens
// (ruler, niah) generate their samples with.
using TokenCounter = std::function<int64_t(std::string_view)>;

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  // Path of the dataset relative to a datasets root (e.g. "math500/test.jsonl").
  virtual std::string default_dataset() const = 0;
  // False for a generated task: its --data is a spec it makes samples from ("name:key=value,…", parsed
  // with common/spec.h), not a file, so nothing looks for it on disk.
  virtual bool reads_dataset() const { return true; }
  // The files loading this --data reads (the dataset file; the files a generated task's spec names), so a dry
  // run can say which are missing.
  virtual std::vector<std::filesystem::path> files_read(const std::filesystem::path& data) const {
    if (reads_dataset()) return {data};
    return {};
  }
  // Throws kvbench::Error naming the file and record on malformed input.
  virtual std::vector<Sample> load(const std::filesystem::path& path) const = 0;
  // The same, where the model's tokenizer is known (a run, a cost estimate): tasks whose samples are sized in
  // its tokens override this; the others load as above.
  virtual std::vector<Sample> load(const std::filesystem::path& path, const TokenCounter& count_tokens) const {
    return load(path);
  }
  virtual Prompt prompt(const Sample& sample) const = 0;
  // Called with the text generated so far; true ends generation early (e.g. a complete \boxed{}).
  virtual bool should_stop(std::string_view generated) const { return false; }
  // Reads only sample.id and sample.record, so `kvbench grade` can re-grade stored records.
  virtual Grade grade(const Sample& sample, std::string_view output) const = 0;
  // Passages of the prompt the answer depends on (rare-fact: its fact sentences); runs record how much
  // of them the cache still held when generation began. Empty: the task names none.
  virtual std::vector<std::string> key_texts(const Sample& sample) const { return {}; }
  // The answer a model should continue the raw prompt with, where the task can write one (rare-fact: each
  // fact restated); texts to train on (`kvbench train-scorer --data TASK-SPEC`). Empty: the prompt alone.
  virtual std::string answer_text(const Sample& sample) const { return {}; }
  // A sample's own limit on new tokens, what a job whose max_new is the task's runs when the task's defaults
  // give 0: RULER's rows, each its task's (kvpress's rows carry it as max_new_tokens).
  virtual int64_t max_new_tokens(const Sample& sample) const { return defaults().max_new_tokens; }
  virtual DecodingDefaults defaults() const = 0;
  // What names a job on this --data in file names and reports: the task's name, or (a generated task whose
  // spec picks among several benchmarks) the name with the benchmark and length.
  virtual std::string label(const std::filesystem::path& data) const { return name(); }
  // The defaults for one --data (a generated task's spec may set them: RULER's tokens to generate per task).
  virtual DecodingDefaults defaults(const std::filesystem::path& data) const { return defaults(); }
};

// Grades without ever throwing, so one bad row never costs a run or a grade file the others: a row the
// grader cannot grade (a malformed gold record, a number no parser takes) is scored 0 with pred=None,
// details.grading_error, and a warning naming `where` (the line or sample).
Grade grade_total(const Task& task, const Sample& sample, std::string_view output, std::string_view where);

// Whose protocol a task follows. Kvbench: kvbench's own (its defaults). Reference: the counter-causal paper's
// code (../shared/reference/counter_causal, tasks.py and evaluate.py) exactly, where kvbench's differs on
// purpose: MATH500's last-\boxed{} stop and extraction graded by math-verify itself, and system_text = the
// text evaluate.py's --auto_frozen tokenizes (the same for every sample of a task). Only the tasks the
// paper's code runs (math500, longhealth, qasper-paper, locomo-paper) have a reference protocol; the others
// ignore the argument. Where a difference is a mere convention, those tasks follow the paper under both.
enum class Protocol { Kvbench, Reference };

// Registry (tasks/registry.cpp): one line per task.
// Throws kvbench::Error for unknown names.
std::unique_ptr<Task> make_task(const std::string& name, Protocol protocol = Protocol::Kvbench);
std::vector<std::string> task_names();
// The tasks the paper's code runs, whose Protocol::Reference differs from their kvbench protocol.
std::vector<std::string> reference_protocol_task_names();

}  // namespace kvbench::tasks
