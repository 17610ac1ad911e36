// RULER's needle-in-a-haystack family (scripts/data/synthetic/niah.py): niah_single_1..3, niah_multikey_1..3,
// niah_multivalue, niah_multiquery. Keys and values are drawn, each (key, value) becomes a needle sentence,
// the needles go into the haystack (noise sentences, distractor needles, or an essay at RULER's depths), and
// some keys are asked for.
#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "tasks/ruler/families.h"

namespace kvbench::tasks::ruler {

namespace {

class Niah : public Family {
 public:
  Niah(const TaskConfig& config, int64_t length, std::vector<std::string> essay)
      : config_(config), short_(length < 4096), essay_(std::move(essay)) {}

  Text make(int64_t size, int64_t /*index*/, SplitMix64& rng) const override {
    std::vector<std::string> keys, needles;
    std::vector<std::vector<std::string>> values;
    for (int k = 0; k < config_.keys; ++k) {
      keys.push_back(random_needle(config_.key_type, rng));
      values.emplace_back();
      for (int v = 0; v < config_.values; ++v) {
        values.back().push_back(random_needle(config_.value_type, rng));
        needles.push_back(needle_sentence(config_.value_type, keys.back(), values.back().back()));
      }
    }
    rng.shuffle(needles);
    const std::string context = config_.haystack == "essay" ? essay_context(size, needles, rng)
                                                            : line_context(size, needles, rng);
    std::vector<std::string> queries, answers;
    for (const int64_t k : sample_indices(rng, config_.keys, config_.queries)) {
      queries.push_back(keys[k]);
      for (const auto& value : values[k]) answers.push_back(value);
    }
    std::string query = queries.back();
    if (queries.size() > 1) query = fmt::format("{}, and {}", fmt::join(queries.begin(), queries.end() - 1, ", "), query);
    const bool singular = config_.queries * config_.values == 1;
    return niah_text(context, query, config_.value_type, singular, std::move(answers), std::move(needles));
  }

  // Where the search for a haystack size starts (RULER: 500 essay words, 25 lines, 5 below 4K). Noise counts
  // sentences here (5 a line); below 4K the essay starts from 50 words (RULER's 500 leave no room at 1K).
  // The needles go to distinct lines, so a line haystack holds at least as many lines as needles.
  int64_t smallest_size() const override {
    if (config_.haystack == "essay") return short_ ? 50 : 500;
    const int64_t needles = config_.keys * config_.values;
    return std::max<int64_t>(short_ ? 5 : 25, config_.haystack == "noise" ? 5 * needles : needles);
  }

 private:
  // Noise lines (`size` sentences) or `size` distractor needles, the needles at distinct random lines.
  std::string line_context(int64_t size, const std::vector<std::string>& needles, SplitMix64& rng) const {
    std::vector<std::string> lines;
    if (config_.haystack == "noise") lines = noise_lines(size);
    for (int64_t i = 0; config_.haystack == "needle" && i < size; ++i)
      lines.push_back(needle_sentence(config_.value_type, random_needle(config_.key_type, rng),
                                      random_needle(config_.value_type, rng)));
    std::vector<int64_t> at = sample_indices(rng, lines.size(), static_cast<int64_t>(needles.size()));
    std::sort(at.rbegin(), at.rend());
    for (std::size_t n = 0; n < needles.size(); ++n) lines.insert(lines.begin() + at[n], needles[n]);
    return fmt::format("{}", fmt::join(lines, "\n"));
  }

  // The essay's first `size` words as sentences, each needle after the sentence at one of RULER's depths.
  std::string essay_context(int64_t size, const std::vector<std::string>& needles, SplitMix64& rng) const {
    const std::vector<std::string> sentences = essay_sentences(essay_, size);
    std::vector<int64_t> cuts;
    for (const int64_t d : sample_indices(rng, static_cast<int64_t>(depths().size()), needles.size()))
      cuts.push_back(static_cast<int64_t>(sentences.size() * (depths()[d] / 100.0)));
    std::sort(cuts.begin(), cuts.end());
    cuts.push_back(static_cast<int64_t>(sentences.size()));
    std::vector<std::string> parts;
    int64_t from = 0;
    for (std::size_t c = 0; c < cuts.size(); ++c) {
      parts.push_back(fmt::format("{}", fmt::join(sentences.begin() + from, sentences.begin() + cuts[c], " ")));
      if (c < needles.size()) parts.push_back(needles[c]);
      from = cuts[c];
    }
    return fmt::format("{}", fmt::join(parts, " "));
  }

  TaskConfig config_;
  bool short_;
  std::vector<std::string> essay_;
};

}  // namespace

Text niah_text(const std::string& context, const std::string& query, std::string type_v, bool singular,
               std::vector<std::string> answers, std::vector<std::string> needles) {
  std::string input =
      "Some special magic {type_needle_v} are hidden within the following text. Make sure to memorize it. I will "
      "quiz you about the {type_needle_v} afterwards.\n{context}\nWhat are all the special magic {type_needle_v} for "
      "{query} mentioned in the provided text?";
  std::string prefix = " The special magic {type_needle_v} for {query} mentioned in the provided text are";
  if (singular) {
    for (std::string* text : {&input, &prefix})
      for (const auto& [from, to] : {std::pair{"Some", "A"}, {"are all", "is"}, {"are", "is"}, {"answers", "answer"}})
        *text = replaced_all(*text, from, to);
    type_v.pop_back();
  }
  const auto filled = [&](const std::string& text) {
    return fmt::format(fmt::runtime(text), fmt::arg("type_needle_v", type_v), fmt::arg("context", context),
                       fmt::arg("query", query));
  };
  return {filled(input), filled(prefix), std::move(answers), std::move(needles)};
}

std::unique_ptr<Family> make_niah_family(const TaskConfig& config, const Spec& spec) {
  std::vector<std::string> essay;
  if (config.haystack == "essay") {
    if (spec.essay.empty())
      fail("ruler {}: the essay haystack needs a text file: add essay=PATH to the spec (RULER uses Paul Graham's "
           "essays, scripts/data/synthetic/json/download_paulgraham_essay.py), or haystack=noise",
           config.name);
    essay = essay_words(spec.essay);
  }
  return std::make_unique<Niah>(config, spec.length, std::move(essay));
}

}  // namespace kvbench::tasks::ruler
