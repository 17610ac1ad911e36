// One implementation for the boxed-answer math benchmarks (MATH500, AIME24/25, HMMT): JSONL records
// with `problem` and `answer`; they differ only in the settings below.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tasks/graders/math_verify.h"
#include "tasks/task.h"

namespace kvbench::tasks {

struct MathTaskSpec {
  std::string name;
  std::string default_dataset;
  std::string id_field;                   // the record's stable id ("unique_id", "id")
  std::vector<std::string> kept_fields;   // metadata copied into Sample.record (subject, level, ...)
  std::string instruction;                // Prompt.system_text
  std::string body_prefix;                // before the problem text ("Problem: " for MATH500)
  std::string cue;                        // after it ("Solution:" for MATH500), see instruction_prompt
  bool stop_at_boxed = false;             // MATH500: stop once a complete \boxed{} exists
  bool integer_answers = false;           // AIME: integer_equal instead of math_equal
  // MATH500 under Protocol::Reference, as tasks.py and evaluate.py run it: system_text = the unformatted
  // Python template of the instruction + "\n\n" (what --auto_frozen tokenizes); stop and extract at the
  // LAST \boxed{} (graders::reference_boxed_answer); math-verify's own verdict (graders::MathVerify).
  bool reference = false;
  DecodingDefaults defaults;
};

class MathTask : public Task {
 public:
  explicit MathTask(MathTaskSpec spec) : spec_(std::move(spec)) {}
  std::string name() const override { return spec_.name; }
  std::string default_dataset() const override { return spec_.default_dataset; }
  // Sample.record = {id, answer, kept fields}; Sample.inputs = {problem}.
  std::vector<Sample> load(const std::filesystem::path& path) const override;
  Prompt prompt(const Sample& sample) const override;
  bool should_stop(std::string_view generated) const override;
  Grade grade(const Sample& sample, std::string_view output) const override;
  DecodingDefaults defaults() const override { return spec_.defaults; }

 private:
  MathTaskSpec spec_;
  mutable std::unique_ptr<graders::MathVerify> math_verify_;  // started by the first reference grade
};

}  // namespace kvbench::tasks
