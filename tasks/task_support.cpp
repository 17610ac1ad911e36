#include "tasks/task_support.h"

#include <fmt/format.h>

#include "common/error.h"
#include "tasks/jsonl.h"

namespace kvbench::tasks {

Prompt instruction_prompt(const std::string& instruction, const std::string& body, const std::string& cue) {
  Prompt prompt;
  prompt.raw = instruction + "\n\n" + body + (cue.empty() ? "" : "\n\n" + cue);
  prompt.messages = {{"system", instruction}, {"user", body}};
  prompt.system_text = instruction;
  return prompt;
}

Prompt instruction_prompt(const std::string& instruction, const std::string& context, const std::string& question,
                          const std::string& cue) {
  Prompt prompt = instruction_prompt(instruction, context + question, cue);
  prompt.parts = PromptParts{instruction + "\n\n" + context, question, cue};
  return prompt;
}

std::string lettered_options(const Sample& sample) {
  auto it = sample.inputs.find("options");
  if (it == sample.inputs.end() || !it->is_array()) fail("sample {} (inputs): missing list \"options\"", sample.id);
  std::string lines;
  char letter = 'A';
  for (const auto& option : *it) {
    if (!option.is_string()) fail("sample {} (inputs): option {} is not a string", sample.id, letter);
    lines += fmt::format("{}{}) {}", lines.empty() ? "" : "\n", letter++, option.get<std::string>());
  }
  return lines;
}

Grade letter_grade(const Sample& sample, std::optional<char> letter) {
  Grade grade;
  if (letter) grade.pred = std::string(1, *letter);
  grade.score = sample.record.at("answer").is_null() ? !grade.pred
                                                     : grade.pred && *grade.pred == record_string(sample, "answer");
  return grade;
}

GeneratedSpec parse_generated_spec(const std::string& text, const std::string& task, int64_t default_samples) {
  if (text.rfind(task, 0) != 0 || (text.size() > task.size() && text[task.size()] != ':'))
    fail("{} spec \"{}\": expected \"{}:key=value,…\" (e.g. {}:seed=0,samples=20)", task, text, task, task);
  GeneratedSpec spec{text, parse_spec(text, task).items};
  constexpr int64_t kMostSamples = 10'000'000;
  spec.seed = spec.items.integer("seed", 0, 0, 999'999'999'999'999'999);
  spec.samples = spec.items.integer("samples", default_samples, 1, kMostSamples);
  return spec;
}

std::string generated_sample_id(uint64_t seed, int64_t index) { return fmt::format("s{}/{}", seed, index); }

std::optional<SpecInPath> spec_in_path(const std::filesystem::path& data, const std::string& task) {
  const std::string text = data.string(), start = task + ":";
  for (std::size_t at = text.find(start); at != std::string::npos; at = text.find(start, at + 1))
    if (at == 0 || text[at - 1] == '/') return SpecInPath{at == 0 ? "" : text.substr(0, at - 1), text.substr(at)};
  return std::nullopt;
}

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  return std::string(text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1));
}

void require_new_id(std::set<std::string>& seen, const std::string& id, const std::string& where) {
  if (!seen.insert(id).second) fail("{}: duplicate id \"{}\"", where, id);
}

std::string record_string(const Sample& sample, const std::string& name) {
  return string_field(sample.record, name, fmt::format("sample {} (record)", sample.id));
}

std::string input_string(const Sample& sample, const std::string& name) {
  return string_field(sample.inputs, name, fmt::format("sample {} (inputs)", sample.id));
}

}  // namespace kvbench::tasks
