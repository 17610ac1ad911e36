// HMMT February 2025 and November 2025 (30 problems each, LaTeX answers; KVpop Table 1 averages both
// with AIME24/25): MathArena's instruction, math_equal on the last boxed answer (16 of February's 30
// answers are not integers), avg@16 at T=0.6 / top-p 0.95, 32768 new tokens.
#include "tasks/math_task.h"

namespace kvbench::tasks {

namespace {

MathTaskSpec hmmt_spec() {
  MathTaskSpec spec;
  spec.instruction = "Please reason step by step, and put your final answer within \\boxed{}.";
  spec.defaults = {/*max_new_tokens=*/32768, /*temperature=*/0.6, /*top_p=*/0.95, /*rollouts=*/16};
  return spec;
}

}  // namespace

std::unique_ptr<Task> make_hmmt_feb_2025_task() {
  MathTaskSpec spec = hmmt_spec();
  spec.name = "hmmt-feb-2025";
  spec.default_dataset = "hmmt_feb_2025/test.jsonl";
  spec.id_field = "id";
  spec.kept_fields = {"competition", "problem_idx"};
  return std::make_unique<MathTask>(std::move(spec));
}

// MathArena's HF rows (problem_idx, problem, answer) as JSON lines: the index is the id.
std::unique_ptr<Task> make_hmmt_nov_2025_task() {
  MathTaskSpec spec = hmmt_spec();
  spec.name = "hmmt-nov-2025";
  spec.default_dataset = "hmmt_nov_2025/test.jsonl";
  spec.id_field = "problem_idx";
  return std::make_unique<MathTask>(std::move(spec));
}

}  // namespace kvbench::tasks
