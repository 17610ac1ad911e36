// GPQA Diamond (198 questions): simple-evals' multiple-choice prompt, options shuffled per record
// (see gpqa_permutation), "Answer: X" / \boxed{X} / last-letter extraction; avg@8 at T=0.6 / top-p 0.95
// with 32768 new tokens for reasoning models.
#include "tasks/gpqa.h"

#include <algorithm>

#include "common/error.h"
#include "tasks/csv.h"
#include "tasks/graders/multiple_choice.h"
#include "tasks/rng.h"
#include "tasks/task_support.h"
#include "tasks/zip.h"

namespace kvbench::tasks {

namespace {

constexpr const char* kMember = "dataset/gpqa_diamond.csv";
constexpr const char* kPassword = "deserted-untie-orchid";  // the authors' public password
constexpr const char* kLetters = "ABCD";

class GpqaDiamond : public Task {
 public:
  std::string name() const override { return "gpqa-diamond"; }
  std::string default_dataset() const override { return "gpqa_diamond/gpqa_diamond.zip"; }

  std::vector<Sample> load(const std::filesystem::path& path) const override {
    return gpqa_samples_from_csv(read_zip_member(path, kMember, kPassword), path.string() + ": " + kMember);
  }

  Prompt prompt(const Sample& sample) const override {
    const std::string body = input_string(sample, "question") + "\n\n" + lettered_options(sample);
    return instruction_prompt(
        "Answer the following multiple choice question. The last line of your response should be of the "
        "following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. Think step by "
        "step before answering.",
        body);
  }

  Grade grade(const Sample& sample, std::string_view output) const override {
    return letter_grade(sample, graders::extract_choice_letter(output, kLetters));
  }

  DecodingDefaults defaults() const override {
    return {/*max_new_tokens=*/32768, /*temperature=*/0.6, /*top_p=*/0.95, /*rollouts=*/8};
  }
};

}  // namespace

std::vector<int> gpqa_permutation(const std::string& record_id) {
  std::vector<int> order = {0, 1, 2, 3};
  SplitMix64 rng(fnv1a64("gpqa:" + record_id));
  rng.shuffle(order);
  return order;
}

std::vector<Sample> gpqa_samples_from_csv(std::string_view csv, const std::string& source) {
  const CsvTable table(csv, source);
  const std::size_t record_id = table.column("Record ID");
  const std::size_t question = table.column("Question");
  const std::size_t domain = table.column("High-level domain");
  const std::size_t subdomain = table.column("Subdomain");
  const std::vector<std::size_t> answers = {table.column("Correct Answer"), table.column("Incorrect Answer 1"),
                                            table.column("Incorrect Answer 2"),
                                            table.column("Incorrect Answer 3")};
  std::vector<Sample> samples;
  std::set<std::string> ids;
  for (std::size_t row = 0; row < table.rows(); ++row) {
    Sample sample;
    sample.id = table.at(row, record_id);
    if (sample.id.empty()) fail("{}: empty \"Record ID\"", table.where(row));
    require_new_id(ids, sample.id, table.where(row));
    const std::vector<int> order = gpqa_permutation(sample.id);
    json options = json::array();
    for (int original : order) {
      std::string option = trimmed(table.at(row, answers[original]));
      if (option.empty()) fail("{}: empty answer option {}", table.where(row), original);
      options.push_back(std::move(option));
    }
    const auto correct_position = std::find(order.begin(), order.end(), 0) - order.begin();
    sample.record = {{"id", sample.id},
                     {"answer", std::string(1, kLetters[correct_position])},
                     {"permutation", order},
                     {"domain", table.at(row, domain)},
                     {"subdomain", table.at(row, subdomain)}};
    sample.inputs = {{"question", trimmed(table.at(row, question))}, {"options", std::move(options)}};
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::unique_ptr<Task> make_gpqa_diamond_task() { return std::make_unique<GpqaDiamond>(); }

}  // namespace kvbench::tasks
