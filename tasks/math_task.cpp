#include "tasks/math_task.h"

#include "common/error.h"
#include "tasks/graders/math.h"
#include "tasks/jsonl.h"
#include "tasks/task_support.h"

namespace kvbench::tasks {

std::vector<Sample> MathTask::load(const std::filesystem::path& path) const {
  std::vector<Sample> samples;
  std::set<std::string> ids;
  for (const auto& line : read_jsonl(path)) {
    Sample sample;
    sample.id = string_field(line.value, spec_.id_field, line.location);
    require_new_id(ids, sample.id, line.location);
    sample.record = {{"id", sample.id}, {"answer", string_field(line.value, "answer", line.location)}};
    for (const auto& field : spec_.kept_fields) {
      if (!line.value.contains(field)) fail("{}: missing field \"{}\"", line.location, field);
      sample.record[field] = line.value[field];
    }
    sample.inputs = {{"problem", string_field(line.value, "problem", line.location)}};
    samples.push_back(std::move(sample));
  }
  return samples;
}

Prompt MathTask::prompt(const Sample& sample) const {
  Prompt prompt =
      instruction_prompt(spec_.instruction, spec_.body_prefix + input_string(sample, "problem"), spec_.cue);
  if (spec_.reference) {
    // evaluate.py tokenizes MATH500_SYSTEM without .format(): its braces stay doubled ("\boxed{{}}").
    std::string unformatted;
    for (char c : spec_.instruction) unformatted += (c == '{' || c == '}') ? std::string(2, c) : std::string(1, c);
    prompt.system_text = unformatted + "\n\n";
  }
  return prompt;
}

bool MathTask::should_stop(std::string_view generated) const {
  if (spec_.reference) return graders::reference_boxed_answer(generated).has_value();  // tasks.py's boxed_done
  return spec_.stop_at_boxed && graders::has_complete_boxed(generated);
}

Grade MathTask::grade(const Sample& sample, std::string_view output) const {
  const std::string gold = record_string(sample, "answer");
  Grade grade;
  if (spec_.reference) {  // compare_math: pred None is wrong
    grade.pred = graders::reference_boxed_answer(output);
    if (!math_verify_) math_verify_ = std::make_unique<graders::MathVerify>();
    grade.score = grade.pred && math_verify_->equal(*grade.pred, gold) ? 1.0 : 0.0;
    return grade;
  }
  grade.pred = graders::extract_math_answer(output);
  if (grade.pred) {
    const bool equal = spec_.integer_answers ? graders::integer_equal(*grade.pred, gold)
                                             : graders::math_equal(*grade.pred, gold);
    grade.score = equal ? 1.0 : 0.0;
  }
  return grade;
}

}  // namespace kvbench::tasks
