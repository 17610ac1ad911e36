// Small pieces every task needs: the instruction-first prompt layout and field access that names the sample.
#pragma once
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/spec.h"
#include "tasks/task.h"

namespace kvbench::tasks {

// raw = instruction + "\n\n" + body, then + "\n\n" + cue when a cue ("Solution:", "Answer:") is given.
// Chat mode: system = instruction, user = body. system_text = instruction, so in raw mode the `auto`
// frozen prefix is exactly the instruction's tokens.
Prompt instruction_prompt(const std::string& instruction, const std::string& body, const std::string& cue = "");
// The same for a body of a context (documents, records, a conversation) and a question after it, which
// kvpress's pipeline reads apart (--pipeline kvpress): its context is the instruction and the context, its
// answer prefix the cue.
Prompt instruction_prompt(const std::string& instruction, const std::string& context, const std::string& question,
                          const std::string& cue);

// sample.inputs["options"] as "A) first\nB) second\n..." (letters from A, one line per option).
std::string lettered_options(const Sample& sample);

// A multiple-choice grade from the letter extracted from an output: it is the prediction, and scores 1 when it
// is the sample's record["answer"]; a null answer (no option is right) is matched by no letter.
Grade letter_grade(const Sample& sample, std::optional<char> letter);

// A generated task's --data: "name:key=value,…" (common/spec.h), its name first. Every generated task has a
// seed and a sample count, read here (`default_samples` when absent); the rest of `items` is the task's own
// (read them, then items.check_all_read()). Sample i of seed S has the id generated_sample_id(S, i), "sS/i".
struct GeneratedSpec {
  std::string text;
  SpecItems items;
  uint64_t seed = 0;
  int64_t samples = 0;
};
GeneratedSpec parse_generated_spec(const std::string& text, const std::string& task, int64_t default_samples);
std::string generated_sample_id(uint64_t seed, int64_t index);

// A generated task's --data split into what came before the spec (the datasets root) and the spec, which
// starts at "<task>:" at the beginning or after a '/' and may itself hold paths (essay=/data/essays.txt);
// nullopt when `data` holds no spec of `task` (a file to read).
struct SpecInPath {
  std::filesystem::path root;
  std::string spec;
};
std::optional<SpecInPath> spec_in_path(const std::filesystem::path& data, const std::string& task);

// `text` without leading and trailing whitespace.
std::string trimmed(std::string_view text);

// Adds `id` to `seen`; kvbench::Error "<where>: duplicate id ..." if it was there (ids must be unique).
void require_new_id(std::set<std::string>& seen, const std::string& id, const std::string& where);

// sample.record[name] / sample.inputs[name] as a string; kvbench::Error "sample <id>: missing field ..."
std::string record_string(const Sample& sample, const std::string& name);
std::string input_string(const Sample& sample, const std::string& name);

}  // namespace kvbench::tasks
