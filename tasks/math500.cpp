// MATH500 (prm800k test split): the reference's raw prompt, stop at the first complete \boxed{},
// math_equal on the last boxed answer; greedy, 2048 new tokens. Protocol::Reference: the paper's code
// exactly (MathTaskSpec::reference).
#include "tasks/math_task.h"

namespace kvbench::tasks {

std::unique_ptr<Task> make_math500_task(Protocol protocol) {
  MathTaskSpec spec;
  spec.name = "math500";
  spec.default_dataset = "math500/test.jsonl";
  spec.id_field = "unique_id";
  spec.kept_fields = {"subject", "level"};
  spec.instruction =
      "Solve the following math problem. Show your reasoning step by step, then put your final answer in "
      "\\boxed{}.";
  spec.body_prefix = "Problem: ";
  spec.cue = "Solution:";
  spec.stop_at_boxed = true;
  spec.reference = protocol == Protocol::Reference;
  spec.defaults.max_new_tokens = 2048;
  return std::make_unique<MathTask>(std::move(spec));
}

}  // namespace kvbench::tasks
