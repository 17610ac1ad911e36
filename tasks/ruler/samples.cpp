// RULER's samples: generated at the length (fitting the haystack as RULER does), or read from RULER-format
// files; and RULER's scoring.
#include <cctype>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"
#include "tasks/jsonl.h"
#include "tasks/ruler/families.h"
#include "tasks/task_support.h"

namespace kvbench::tasks::ruler {

int64_t prompt_tokens(const Text& text, const TokenCounter& count_tokens) {
  return count_tokens(text.input + text.answer_prefix);
}

int64_t largest_fitting(const std::function<bool(int64_t)>& fits, int64_t start, int64_t smallest, int64_t largest) {
  const auto bounded = [&](int64_t size) { return largest > 0 ? std::min(size, largest) : size; };
  start = bounded(std::max(start, smallest));
  int64_t fitting, failing;  // the answer lies in [fitting, failing)
  if (fits(start)) {
    fitting = start;
    for (int64_t step = std::max<int64_t>(1, start / 100);; step *= 2) {
      const int64_t next = bounded(fitting + step);
      if (next == fitting) return fitting;  // the largest size fits
      if (!fits(next)) {
        failing = next;
        break;
      }
      fitting = next;
    }
  } else {
    failing = start;
    for (int64_t step = std::max<int64_t>(1, start / 100);; step *= 2) {
      const int64_t next = std::max(failing - step, smallest);
      if (next == failing) return smallest - 1;  // not even the smallest fits
      if (fits(next)) {
        fitting = next;
        break;
      }
      failing = next;
    }
  }
  while (failing - fitting > 1) {
    const int64_t middle = fitting + (failing - fitting) / 2;
    (fits(middle) ? fitting : failing) = middle;
  }
  return fitting;
}

Sample to_sample(const std::string& id, const std::string& task, Text text, int64_t length, int64_t max_length) {
  Sample sample;
  sample.id = id;
  sample.record = {{"id", id},         {"task", task},           {"outputs", text.outputs},
                   {"length", length}, {"max_length", max_length}, {"key_texts", text.key_texts}};
  sample.inputs = {{"input", std::move(text.input)}, {"answer_prefix", std::move(text.answer_prefix)}};
  return sample;
}

std::vector<FittedText> fitted_texts(const Family& family, const std::string& stream, int64_t length,
                                    int tokens_to_generate, int64_t count, const TokenCounter& count_tokens) {
  const int64_t budget = length - tokens_to_generate;
  std::vector<FittedText> texts;
  int64_t size = family.smallest_size();  // each sample's search starts from the previous sample's size
  for (int64_t i = 0; i < count; ++i) {
    std::optional<FittedText> best;
    int64_t best_size = 0, smallest_tokens = 0;
    const auto fits = [&](int64_t candidate) {
      SplitMix64 rng(fnv1a64(fmt::format("{}:{}", stream, i)));  // sample i's own draws, whatever its size
      Text text = family.make(candidate, i, rng);
      const int64_t tokens = prompt_tokens(text, count_tokens);
      if (candidate == family.smallest_size()) smallest_tokens = tokens;
      if (tokens > budget) return false;
      if (candidate > best_size) best = FittedText{std::move(text), tokens + tokens_to_generate}, best_size = candidate;
      return true;
    };
    size = largest_fitting(fits, size, family.smallest_size(), family.largest_size());
    if (size < family.smallest_size())
      fail("{}: length {} is too short (the smallest haystack takes {} tokens with {} to generate)", stream, length,
           smallest_tokens, tokens_to_generate);
    texts.push_back(std::move(*best));
  }
  return texts;
}

std::vector<Sample> generate_samples(const Spec& spec, const TokenCounter& count_tokens) {
  const std::unique_ptr<Family> family = make_family(spec, count_tokens);
  const std::string stream = fmt::format("ruler {} at {} (seed {})", spec.task.name, spec.length, spec.seed);
  std::vector<Sample> samples;
  for (auto& fitted : fitted_texts(*family, stream, spec.length, spec.task.tokens_to_generate, spec.samples, count_tokens))
    samples.push_back(to_sample(generated_sample_id(spec.seed, samples.size()), spec.task.name, std::move(fitted.text),
                                fitted.length, spec.length));
  return samples;
}

namespace {

std::vector<std::string> strings(const json& value, const std::string& where, const std::string& field) {
  if (value.is_string()) return {value.get<std::string>()};
  if (!value.is_array() || value.empty()) fail("{}: \"{}\" must be a string or a non-empty list of strings", where, field);
  std::vector<std::string> result;
  for (const auto& item : value) {
    if (!item.is_string()) fail("{}: \"{}\" must be a list of strings", where, field);
    result.push_back(item);
  }
  return result;
}

}  // namespace

std::vector<Sample> read_samples(const std::filesystem::path& path, const std::string& directory) {
  bool known_directory = false;
  for (const auto& config : task_configs()) known_directory |= config.name == directory;
  std::vector<Sample> samples;
  std::set<std::string> ids;
  for (const JsonlLine& record : read_jsonl(path)) {
    const json& line = record.value;
    const std::string& where = record.location;
    if (!line.is_object()) fail("{}: expected a JSON object", where);
    Text text;
    const std::string task = line.contains("task") ? string_field(line, "task", where)
                             : known_directory ? directory : "ruler";
    std::optional<int64_t> question_at;
    if (line.contains("context")) {  // kvpress's set: the context, then the question
      text.input = string_field(line, "context", where);
      question_at = static_cast<int64_t>(text.input.size());
      text.input += string_field(line, "question", where);
      text.outputs = strings(line.contains("answer") ? line.at("answer") : json(), where, "answer");
    } else {
      text.input = string_field(line, "input", where);
      text.outputs = strings(line.contains("outputs") ? line.at("outputs") : json(), where, "outputs");
    }
    // lm-evaluation-harness writes the prefix stripped, RULER and kvpress with its leading space.
    if (line.contains("answer_prefix")) text.answer_prefix = string_field(line, "answer_prefix", where);
    else if (line.contains("gen_prefix")) text.answer_prefix = " " + string_field(line, "gen_prefix", where);
    std::string id = line.contains("index") ? fmt::format("{}/{}", task, line.at("index").dump())
                                            : fmt::format("{}/{}", task, samples.size());
    require_new_id(ids, id, where);
    const auto integer = [&](const char* field) {
      const auto it = line.find(field);
      return it != line.end() && it->is_number_integer() ? it->get<int64_t>() : int64_t{0};
    };
    const int64_t length = integer("length"), max_length = integer("max_length");
    samples.push_back(to_sample(id, task, std::move(text), length, max_length));
    if (question_at) samples.back().inputs["question_at"] = *question_at;  // kvpress's split, as the row has it
    if (const int64_t max_new = integer("max_new_tokens"); max_new > 0) samples.back().inputs["max_new_tokens"] = max_new;
  }
  if (samples.empty()) fail("{}: no samples", path.string());
  return samples;
}

std::string postprocess_prediction(std::string_view prediction) {
  std::string text(prediction);
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20) c = '\n';
  return trimmed(text);
}

namespace {
std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}
}  // namespace

double string_match(const std::string& prediction, const std::vector<std::string>& references, bool match_all) {
  if (references.empty()) return 0.0;
  const std::string haystack = lowercase(postprocess_prediction(prediction));
  int found = 0;
  for (const auto& reference : references) found += haystack.find(lowercase(reference)) != std::string::npos;
  return match_all ? static_cast<double>(found) / references.size() : (found > 0 ? 1.0 : 0.0);
}

}  // namespace kvbench::tasks::ruler
