// AIME 2024 and 2025 (30 problems each): MathArena's instruction, integer exact match (leading zeros
// ignored), avg@16 at T=0.6 / top-p 0.95. 32768 new tokens leaves room for reasoning models' traces.
#include "tasks/math_task.h"

namespace kvbench::tasks {

namespace {
std::unique_ptr<Task> make_aime_task(const std::string& year, std::vector<std::string> kept_fields) {
  MathTaskSpec spec;
  spec.name = "aime" + year;
  spec.default_dataset = "aime" + year + "/test.jsonl";
  spec.id_field = "id";
  spec.kept_fields = std::move(kept_fields);
  spec.instruction =
      "Please reason step by step, and put your final answer within \\boxed{}.\n"
      "The answer is an integer between 0 and 999 inclusive.";
  spec.integer_answers = true;
  spec.defaults = {/*max_new_tokens=*/32768, /*temperature=*/0.6, /*top_p=*/0.95, /*rollouts=*/16};
  return std::make_unique<MathTask>(std::move(spec));
}
}  // namespace

std::unique_ptr<Task> make_aime24_task() { return make_aime_task("24", {"url"}); }
std::unique_ptr<Task> make_aime25_task() { return make_aime_task("25", {"competition", "problem_idx"}); }

}  // namespace kvbench::tasks
