// RULER's variable tracking, vt (scripts/data/synthetic/variable_tracking.py; synthetic.yaml: noise haystack,
// one chain of four hops): "VAR A = 12345", then "VAR B = VAR A ", … among noise lines; the answer is every
// variable holding the value. Like RULER, each prompt starts with one worked example (made once, at 500
// tokens, with 3-letter names and the value 12345) whose names and value are redrawn per sample. Sizes count
// noise sentences.
#include <fmt/format.h>

#include "tasks/ruler/families.h"

namespace kvbench::tasks::ruler {

namespace {

constexpr int kChains = 1, kHops = 4;
const char* const kTemplate =
    "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n{context}\n"
    "Question: Find all variables that are assigned the value {query} in the text above.";
const char* const kAnswerPrefix =
    " Answer: According to the chain(s) of variable assignment in the text above, {num_v} variables are assigned "
    "the value {query}, they are: ";

std::string uppercase_letters(SplitMix64& rng, int count) {
  std::string name;
  for (int i = 0; i < count; ++i) name += static_cast<char>('A' + rng.below(26));
  return name;
}

class VariableTracking : public Family {
 public:
  explicit VariableTracking(const TokenCounter& count_tokens) {
    // RULER's example: its own fit to 500 tokens, nothing reserved for generation.
    const auto example = [](int64_t size) {
      SplitMix64 rng(fnv1a64("ruler:vt:example"));
      return chains_text(size, rng, /*example=*/true);
    };
    const auto fits = [&](int64_t size) { return prompt_tokens(example(size), count_tokens) <= 500; };
    Text text = example(std::max<int64_t>(largest_fitting(fits, 25, 25, 0), 25));
    example_ = text.input + text.answer_prefix + " " + fmt::format("{}", fmt::join(text.outputs, " ")) + "\n";
    example_names_ = text.outputs;
  }

  Text make(int64_t size, int64_t /*index*/, SplitMix64& rng) const override {
    Text text = chains_text(size, rng, /*example=*/false);
    std::string example = example_;
    for (const auto& name : example_names_) example = replaced_all(example, name, uppercase_letters(rng, name.size()));
    example = replaced_all(example, "12345", std::to_string(10000 + rng.below(89999)));
    text.input = example + "\n" + text.input;
    return text;
  }

  int64_t smallest_size() const override { return 25; }  // noise sentences (RULER: 5 lines)

 private:
  // Noise lines with each chain's statements at sorted random lines; the query is the first chain's value.
  static Text chains_text(int64_t size, SplitMix64& rng, bool example) {
    const int letters = example ? 3 : 5;
    std::set<std::string> taken;
    std::vector<std::vector<std::string>> names(kChains), chains(kChains);
    for (int c = 0; c < kChains; ++c) {
      for (int v = 0; v <= kHops; ++v) {
        std::string name = uppercase_letters(rng, letters);
        while (!taken.insert(name).second) name = uppercase_letters(rng, letters);
        names[c].push_back(name);
      }
      const std::string value = example ? "12345" : std::to_string(10000 + rng.below(89999));
      chains[c].push_back(fmt::format("VAR {} = {}", names[c][0], value));
      for (int v = 1; v <= kHops; ++v) chains[c].push_back(fmt::format("VAR {} = VAR {} ", names[c][v], names[c][v - 1]));
    }
    std::vector<std::string> lines = noise_lines(size);
    for (const auto& chain : chains) {
      std::vector<int64_t> at = sample_indices(rng, lines.size(), chain.size());
      std::sort(at.begin(), at.end());
      for (std::size_t j = 0; j < chain.size(); ++j) lines.insert(lines.begin() + at[j] + j, chain[j]);
    }
    const std::string context = replaced_all(fmt::format("{}", fmt::join(lines, "\n")), ". \n", ".\n");
    const std::string value = chains[0][0].substr(chains[0][0].rfind('=') + 2);
    const auto filled = [&](const char* text) {
      return fmt::format(fmt::runtime(text), fmt::arg("context", context), fmt::arg("query", value),
                         fmt::arg("num_v", kHops + 1));
    };
    return {filled(kTemplate), filled(kAnswerPrefix), names[0], chains[0]};
  }

  std::string example_;
  std::vector<std::string> example_names_;
};

}  // namespace

std::unique_ptr<Family> make_variable_tracking_family(const Spec& /*spec*/, const TokenCounter& count_tokens) {
  return std::make_unique<VariableTracking>(count_tokens);
}

}  // namespace kvbench::tasks::ruler
