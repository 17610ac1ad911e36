// The generators of RULER's task families, one file each; make_family (task.cpp) picks one.
#pragma once
#include "tasks/ruler/ruler.h"

namespace kvbench::tasks::ruler {

// RULER's niah template and answer prefix filled in; `singular` (one answer) makes them singular by RULER's
// word replacements ("Some" → "A", "are" → "is", …, "numbers" → "number").
Text niah_text(const std::string& context, const std::string& query, std::string type_v, bool singular,
               std::vector<std::string> answers, std::vector<std::string> needles);

std::unique_ptr<Family> make_niah_family(const TaskConfig& config, const Spec& spec);
std::unique_ptr<Family> make_variable_tracking_family(const Spec& spec, const TokenCounter& count_tokens);
std::unique_ptr<Family> make_common_words_family(const Spec& spec);
std::unique_ptr<Family> make_frequent_words_family(const Spec& spec);
std::unique_ptr<Family> make_qa_family(const TaskConfig& config, const Spec& spec);

// The largest size in [smallest, largest] (largest 0: unbounded) that `fits`, searched from `start`: steps
// doubling away from it until the answer is bracketed, then bisection; smallest - 1 when none fits. RULER
// bisects once from an estimate and shrinks each sample by a fixed step; searching per sample from the
// previous sample's size takes a few tokenizations and brings every sample within one unit of the length.
int64_t largest_fitting(const std::function<bool(int64_t)>& fits, int64_t start, int64_t smallest, int64_t largest);
int64_t prompt_tokens(const Text& text, const TokenCounter& count_tokens);

// `count` distinct indices of [0, n) drawn uniformly, in drawing order (Python's random.sample).
std::vector<int64_t> sample_indices(SplitMix64& rng, int64_t n, int64_t count);
std::string replaced_all(std::string text, const std::string& from, const std::string& to);


}  // namespace kvbench::tasks::ruler
