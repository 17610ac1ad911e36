// Small pieces every task needs: the instruction-first prompt layout and field access that names the sample.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "tasks/task.h"

namespace kvbench::tasks {

// raw = instruction + "\n\n" + body, then + "\n\n" + cue when a cue ("Solution:", "Answer:") is given.
// Chat mode: system = instruction, user = body. system_text = instruction, so in raw mode the `auto`
// frozen prefix is exactly the instruction's tokens.
Prompt instruction_prompt(const std::string& instruction, const std::string& body, const std::string& cue = "");

// sample.inputs["options"] as "A) first\nB) second\n..." (letters from A, one line per option).
std::string lettered_options(const Sample& sample);

// A multiple-choice grade from the letter extracted from an output: it is the prediction, and scores 1 when it
// is the sample's record["answer"]; a null answer (no option is right) is matched by no letter.
Grade letter_grade(const Sample& sample, std::optional<char> letter);

// `text` without leading and trailing whitespace.
std::string trimmed(std::string_view text);

// Adds `id` to `seen`; kvbench::Error "<where>: duplicate id ..." if it was there (ids must be unique).
void require_new_id(std::set<std::string>& seen, const std::string& id, const std::string& where);

// sample.record[name] / sample.inputs[name] as a string; kvbench::Error "sample <id>: missing field ..."
std::string record_string(const Sample& sample, const std::string& name);
std::string input_string(const Sample& sample, const std::string& name);

}  // namespace kvbench::tasks
