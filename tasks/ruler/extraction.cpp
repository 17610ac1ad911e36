// RULER's aggregation tasks. cwe (common_words_extraction.py): a numbered list in which 10 words appear often
// (30 times; 6 below 4K) and the others rarely (3; 1 below 4K), after one worked example; the answer is the 10.
// fwe (freq_words_extraction.py): coded six-letter words with Zipf counts (alpha 2) over a vocabulary of
// (length - 50) / 50 words, the most frequent made "..." noise; the answer is ranks 2-4.
#include <cmath>

#include <fmt/format.h>

#include "tasks/ruler/families.h"

namespace kvbench::tasks::ruler {

namespace {

const char* const kCommonTemplate =
    "Below is a numbered list of words. In these words, some appear more often than others. Memorize the ones that "
    "appear most often.\n{context}\nQuestion: What are the 10 most common words in the above list?";
const char* const kCommonAnswerPrefix = " Answer: The top 10 words that appear most often in the list are:";
const char* const kFrequentTemplate =
    "Read the following coded text and track the frequency of each coded word. Find the three most frequently "
    "appeared coded words. {context}\nQuestion: Do not provide any explanation. Please ignore the dots '....'. What "
    "are the three most frequently appeared words in the above coded text?";
const char* const kFrequentAnswerPrefix =
    " Answer: According to the coded text above, the three most frequently appeared words are:";

std::string numbered(const std::vector<std::string>& words) {
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i) text += fmt::format("{}{}. {}", i ? " " : "", i + 1, words[i]);
  return text;
}

std::string with_context(const char* text, const std::string& context) {
  return fmt::format(fmt::runtime(text), fmt::arg("context", context));
}

class CommonWords : public Family {
 public:
  explicit CommonWords(int64_t length) : short_(length < 4096) {}

  Text make(int64_t size, int64_t /*index*/, SplitMix64& rng) const override {
    const auto [example_list, example_answer] = short_ ? list(20, 3, 1, rng) : list(40, 10, 3, rng);
    const auto [word_list, answer] = short_ ? list(size, 6, 1, rng) : list(size, 30, 3, rng);
    const std::string example = with_context(kCommonTemplate, example_list) + kCommonAnswerPrefix + " " +
                                numbered(example_answer);
    return {example + "\n" + with_context(kCommonTemplate, word_list), kCommonAnswerPrefix, answer, {}};
  }

  int64_t smallest_size() const override { return 10; }

 private:
  static constexpr int kCommon = 10;

  // `words` distinct words, the first 10 repeated `common` times and the others `rare` times, shuffled.
  static std::pair<std::string, std::vector<std::string>> list(int64_t words, int common, int rare, SplitMix64& rng) {
    const std::vector<std::string> pool = word_pool(words);
    std::vector<std::string> chosen;
    for (const int64_t i : sample_indices(rng, pool.size(), words)) chosen.push_back(pool[i]);
    std::vector<std::string> occurrences;
    for (std::size_t w = 0; w < chosen.size(); ++w)
      for (int r = 0; r < (static_cast<int>(w) < kCommon ? common : rare); ++r) occurrences.push_back(chosen[w]);
    rng.shuffle(occurrences);
    chosen.resize(std::min<std::size_t>(kCommon, chosen.size()));
    return {numbered(occurrences), chosen};
  }

  bool short_;
};

class FrequentWords : public Family {
 public:
  explicit FrequentWords(int64_t length) : vocabulary_(std::max<int64_t>(4, (length - 50) / 50)) {}

  Text make(int64_t size, int64_t /*index*/, SplitMix64& rng) const override {
    std::vector<std::string> vocabulary;
    std::set<std::string> seen;
    while (static_cast<int64_t>(vocabulary.size()) < vocabulary_) {
      std::string word;
      for (int i = 0; i < 6; ++i) word += static_cast<char>('a' + rng.below(26));
      if (seen.insert(word).second) vocabulary.push_back(word);
    }
    vocabulary[0] = "...";  // the most frequent rank is noise
    // Rank k appears floor(size * k^-alpha / zeta(alpha)) times; alpha = 2, zeta(2) = pi^2 / 6.
    std::vector<std::string> words;
    for (int64_t k = 1; k <= vocabulary_; ++k) {
      const auto count = static_cast<int64_t>(size * std::pow(k, -2.0) / (M_PI * M_PI / 6));
      words.insert(words.end(), count, vocabulary[k - 1]);
    }
    rng.shuffle(words);
    return {with_context(kFrequentTemplate, fmt::format("{}", fmt::join(words, " "))), kFrequentAnswerPrefix,
            {vocabulary[1], vocabulary[2], vocabulary[3]}, {}};
  }

  int64_t smallest_size() const override { return 10; }

 private:
  int64_t vocabulary_;
};

}  // namespace

std::unique_ptr<Family> make_common_words_family(const Spec& spec) {
  return std::make_unique<CommonWords>(spec.length);
}
std::unique_ptr<Family> make_frequent_words_family(const Spec& spec) {
  return std::make_unique<FrequentWords>(spec.length);
}

}  // namespace kvbench::tasks::ruler
