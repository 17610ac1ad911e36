#include "run/kvpress_rows.h"

#include "common/error.h"
#include "run/runner.h"

namespace kvbench {

namespace {
std::vector<std::string> references(const tasks::Task& task, const tasks::Sample& sample) {
  if (const auto outputs = sample.record.find("outputs"); outputs != sample.record.end() && outputs->is_array())
    return outputs->get<std::vector<std::string>>();
  if (std::string answer = task.answer_text(sample); !answer.empty()) return {answer};
  fail("sample {} of task {}: no reference answers to write as kvpress's \"answer\"", sample.id, task.name());
}
}  // namespace

std::vector<nlohmann::json> kvpress_rows(const ResolvedJob& job, const Tokenizer& tokenizer) {
  const tasks::Task& task = job.benchmark();
  std::vector<nlohmann::json> rows;
  for (const tasks::Sample& sample : job_samples(job, tokenizer)) {
    const tasks::Prompt prompt = task.prompt(sample);
    if (!prompt.parts)
      fail("sample {} of task {}: its prompt has no context/question split, which kvpress's format needs", sample.id,
           task.name());
    rows.push_back({{"index", rows.size()},
                    {"context", prompt.parts->context},
                    {"question", prompt.parts->question},
                    {"answer_prefix", prompt.parts->answer_prefix},
                    {"answer", references(task, sample)},
                    {"task", sample.record.value("task", task.name())},
                    {"max_new_tokens", sample_max_new(job, sample)}});
  }
  return rows;
}

}  // namespace kvbench
