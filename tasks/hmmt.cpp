// HMMT February 2025 (30 problems, LaTeX answers): MathArena's instruction, math_equal on the last boxed
// answer (16 of 30 answers are not integers), avg@16 at T=0.6 / top-p 0.95, 32768 new tokens.
#include "tasks/math_task.h"

namespace kvbench::tasks {

std::unique_ptr<Task> make_hmmt_feb_2025_task() {
  MathTaskSpec spec;
  spec.name = "hmmt-feb-2025";
  spec.default_dataset = "hmmt_feb_2025/test.jsonl";
  spec.id_field = "id";
  spec.kept_fields = {"competition", "problem_idx"};
  spec.instruction = "Please reason step by step, and put your final answer within \\boxed{}.";
  spec.defaults = {/*max_new_tokens=*/32768, /*temperature=*/0.6, /*top_p=*/0.95, /*rollouts=*/16};
  return std::make_unique<MathTask>(std::move(spec));
}

}  // namespace kvbench::tasks
