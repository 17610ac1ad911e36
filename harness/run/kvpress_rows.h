// A job's samples in kvpress's dataset format (the rows of HF simonjegou/ruler that kvpress's evaluation reads):
// so kvpress's own evaluation/evaluate.py can run on exactly the samples a kvbench job runs.
#pragma once
#include <nlohmann/json.hpp>

#include <vector>

#include "run/resolved_job.h"
#include "tokenizer/tokenizer.h"

namespace kvbench {

// One row per sample the job runs (its limit and sample ids applied): "context", "question" and "answer_prefix"
// as --pipeline kvpress splits the prompt (tasks::PromptParts), "answer" (the references: a list), "task" (the
// row's task, which picks kvpress's RULER metric), "max_new_tokens" (the job's, the task's own unless given) and
// "index". `tokenizer` sizes generated samples (RULER's lengths are in the model's tokens). Throws
// kvbench::Error naming the sample when its task gives no context/question split or no references.
std::vector<nlohmann::json> kvpress_rows(const ResolvedJob& job, const Tokenizer& tokenizer);

}  // namespace kvbench
