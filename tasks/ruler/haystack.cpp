// RULER's haystacks and needles (scripts/data/synthetic/niah.py): the noise sentence, the needle sentence,
// random keys and values, the Paul Graham essay haystack (read from a file the user supplies) and the needle
// depths.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/error.h"
#include "tasks/ruler/families.h"

namespace kvbench::tasks::ruler {

const char* const kNoise = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";
const char* const kNeedle = "One of the special magic {} for {} is: {}.";

std::vector<std::string> noise_lines(int64_t sentences) {
  static const std::vector<std::string> kSentences = {"The grass is green.", "The sky is blue.", "The sun is yellow.",
                                                      "Here we go.", "There and back again."};
  std::vector<std::string> lines(sentences / kSentences.size(), kNoise);
  if (const auto rest = sentences % kSentences.size())
    lines.push_back(fmt::format("{}", fmt::join(kSentences.begin(), kSentences.begin() + rest, " ")));
  return lines;
}

std::string needle_sentence(const std::string& type_v, const std::string& key, const std::string& value) {
  return fmt::format(fmt::runtime(kNeedle), type_v, key, value);
}

namespace {

// Python's uuid.UUID(int=bits, version=4): the version nibble set to 4, the variant bits to 10.
std::string uuid4(SplitMix64& rng) {
  const uint64_t high = (rng.next() & ~0xF000ull) | 0x4000ull;
  const uint64_t low = (rng.next() & ~(0xC000ull << 48)) | (0x8000ull << 48);
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xFFFF, high & 0xFFFF,
                     low >> 48, low & 0xFFFFFFFFFFFFull);
}

// A word that ends a sentence, as nltk's punkt mostly decides: ends in . ! or ? (before closing quotes or
// brackets) and is not a common abbreviation or an initial.
bool ends_sentence(const std::string& word) {
  std::size_t end = word.size();
  while (end > 0 && std::string_view("\"')]").find(word[end - 1]) != std::string_view::npos) --end;
  if (end == 0 || std::string_view(".!?").find(word[end - 1]) == std::string_view::npos) return false;
  const std::string stem = word.substr(0, end);
  static const std::set<std::string> kAbbreviations = {"Mr.", "Mrs.", "Ms.", "Dr.", "St.", "vs.", "etc.", "e.g.",
                                                       "i.e.", "Jr.", "Sr.", "Inc.", "Co.", "U.S."};
  if (kAbbreviations.count(stem)) return false;
  return !(stem.size() == 2 && std::isupper(static_cast<unsigned char>(stem[0])));
}

}  // namespace

std::string random_needle(const std::string& type, SplitMix64& rng) {
  if (type == "numbers") return std::to_string(1'000'000 + rng.below(9'000'000));  // 7 digits
  if (type == "words") return rng.pick(adjectives()) + "-" + rng.pick(nouns());
  if (type == "uuids") return uuid4(rng);
  fail("ruler: unknown needle type \"{}\" (numbers, words or uuids)", type);
}

std::vector<std::string> essay_words(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail("{}: cannot read the essay haystack", file.string());
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  if (words.empty()) fail("{}: the essay haystack is empty", file.string());
  return words;
}

std::vector<std::string> essay_sentences(const std::vector<std::string>& words, int64_t count) {
  std::vector<std::string> sentences;
  std::string sentence;
  for (int64_t i = 0; i < count; ++i) {
    const std::string& word = words[i % words.size()];
    sentence += (sentence.empty() ? "" : " ") + word;
    if (ends_sentence(word)) sentences.push_back(std::move(sentence)), sentence.clear();
  }
  if (!sentence.empty()) sentences.push_back(std::move(sentence));
  return sentences;
}

std::vector<int64_t> sample_indices(SplitMix64& rng, int64_t n, int64_t count) {
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  count = std::clamp<int64_t>(count, 0, n);
  for (int64_t i = 0; i < count; ++i) std::swap(order[i], order[i + rng.below(n - i)]);  // partial Fisher-Yates
  order.resize(count);
  return order;
}

std::string replaced_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

const std::vector<int>& depths() {
  static const std::vector<int> values = [] {
    std::vector<int> result;
    for (int i = 0; i < 40; ++i) result.push_back(static_cast<int>(std::nearbyint(100.0 * i / 39)));
    return result;
  }();
  return values;
}

}  // namespace kvbench::tasks::ruler
