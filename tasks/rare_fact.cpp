// Rare-fact recall (see rare_fact.h). Grading: the codes are the 4-digit numbers of the output, in
// order (lockers have at most 2 digits, the filler has none); the score is the fraction of facts whose
// code equals the number at its position — for one fact, the first 4-digit number must be the code.
#include "tasks/rare_fact.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"
#include "common/spec.h"
#include "tasks/rng.h"
#include "tasks/task_support.h"

namespace kvbench::tasks {

namespace {

// Filler vocabulary: no digits, and none of the fact or question words ("code", "locker").
const std::vector<std::string> kNames = {"Lily", "Tom", "Mia", "Ben", "Sara", "Max", "Anna", "Leo", "Zoe", "Sam",
                                         "Nora", "Finn"};
const std::vector<std::string> kPlaces = {"park", "garden", "river", "market", "forest", "beach", "library",
                                          "kitchen", "hill", "bakery", "barn", "pond"};
const std::vector<std::string> kThings = {"red ball", "kite", "basket of apples", "small boat", "blue hat",
                                          "book of songs", "wooden box", "puppy", "lantern", "paper map"};
const std::vector<std::string> kWeather = {"sunny", "quiet", "windy", "bright", "cold", "warm", "busy", "calm"};
const std::vector<std::string> kMoves = {"walked", "ran", "hopped", "wandered", "raced", "strolled"};
const std::vector<std::string> kFeelings = {"happy", "sleepy", "curious", "proud", "brave", "silly"};
const std::vector<std::string> kTimes = {"In the morning", "After lunch", "Later that day", "At sunset", "One day",
                                         "The next day"};

std::string filler_sentence(SplitMix64& rng) {
  const std::string& name = rng.pick(kNames);
  std::string friend_name = rng.pick(kNames);
  while (friend_name == name) friend_name = rng.pick(kNames);
  switch (rng.below(8)) {
    case 0: return rng.pick(kTimes) + ", " + name + " " + rng.pick(kMoves) + " to the " + rng.pick(kPlaces) + ".";
    case 1: return name + " found a " + rng.pick(kThings) + " near the " + rng.pick(kPlaces) + ".";
    case 2: return "The " + rng.pick(kPlaces) + " was " + rng.pick(kWeather) + " and " + name + " felt " +
                   rng.pick(kFeelings) + ".";
    case 3: return name + " and " + friend_name + " played with a " + rng.pick(kThings) + " for a long time.";
    case 4: return name + " told " + friend_name + " a story about a " + rng.pick(kThings) + ".";
    case 5: return "It was a " + rng.pick(kWeather) + " day, so " + name + " stayed by the " + rng.pick(kPlaces) + ".";
    case 6: return name + " smiled and gave the " + rng.pick(kThings) + " to " + friend_name + ".";
    default: return "The birds sang while " + name + " " + rng.pick(kMoves) + " past the " + rng.pick(kPlaces) + ".";
  }
}

int word_count(const std::string& sentence) { return static_cast<int>(std::count(sentence.begin(), sentence.end(), ' ')) + 1; }

std::string fact_sentence(int locker, const std::string& code) {
  return fmt::format("The code for locker {} is {}.", locker, code);
}

// `count` distinct values uniform in [low, high].
std::vector<int> distinct_values(SplitMix64& rng, int count, int low, int high) {
  std::vector<int> values;
  while (static_cast<int>(values.size()) < count) {
    const int value = low + static_cast<int>(rng.below(high - low + 1));
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  return values;
}

// The story: filler sentences, each fact inserted before the first sentence starting at or after its
// position (in filler words), paragraphs of six sentences.
std::string story(const std::vector<std::string>& filler, int filler_words, const std::vector<std::string>& facts,
                  const std::vector<double>& positions) {
  std::vector<std::pair<double, std::string>> pending;
  for (std::size_t f = 0; f < facts.size(); ++f) pending.emplace_back(positions[f] * filler_words, facts[f]);
  std::stable_sort(pending.begin(), pending.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> sentences;
  auto next_fact = pending.begin();
  int words_so_far = 0;
  for (const auto& sentence : filler) {
    for (; next_fact != pending.end() && next_fact->first <= words_so_far; ++next_fact) sentences.push_back(next_fact->second);
    sentences.push_back(sentence);
    words_so_far += word_count(sentence);
  }
  for (; next_fact != pending.end(); ++next_fact) sentences.push_back(next_fact->second);
  std::string text;
  for (std::size_t s = 0; s < sentences.size(); ++s)
    text += (s == 0 ? "" : s % 6 == 0 ? "\n\n" : " ") + sentences[s];
  return text;
}

Sample generate_sample(const RareFactSpec& spec, int index) {
  SplitMix64 rng(fnv1a64(fmt::format("rare-fact:{}:{}", spec.seed, index)));
  const std::vector<int> lockers = distinct_values(rng, spec.facts, 1, 99);
  const std::vector<int> codes = distinct_values(rng, spec.facts, 1000, 9999);
  std::vector<double> positions = spec.positions;
  while (static_cast<int>(positions.size()) < spec.facts) positions.push_back(0.05 + 0.9 * rng.unit());

  std::vector<std::string> filler;
  int filler_words = 0;
  while (filler_words < spec.words) {
    filler.push_back(filler_sentence(rng));
    filler_words += word_count(filler.back());
  }
  std::vector<std::string> facts;
  json answers = json::array();
  for (int f = 0; f < spec.facts; ++f) {
    facts.push_back(fact_sentence(lockers[f], std::to_string(codes[f])));
    answers.push_back(std::to_string(codes[f]));
  }
  Sample sample;
  sample.id = generated_sample_id(spec.seed, index);
  sample.record = {{"id", sample.id}, {"answers", answers}, {"lockers", lockers}, {"positions", positions}};
  sample.inputs = {{"text", story(filler, filler_words, facts, positions)}};
  return sample;
}

// The four-digit numbers of `text`, in order.
std::vector<std::string> four_digit_numbers(std::string_view text) {
  std::vector<std::string> numbers;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = i;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end - i == 4) numbers.emplace_back(text.substr(i, 4));
    i = end > i ? end : i + 1;
  }
  return numbers;
}

class RareFact : public Task {
 public:
  std::string name() const override { return "rare-fact"; }
  std::string default_dataset() const override { return "rare-fact:seed=0,samples=50,words=2000,facts=1"; }
  bool reads_dataset() const override { return false; }

  std::vector<Sample> load(const std::filesystem::path& path) const override {
    return generate_rare_fact_samples(parse_rare_fact_spec(path.filename().string()));
  }

  Prompt prompt(const Sample& sample) const override {
    const auto& lockers = sample.record.at("lockers");
    std::string questions;
    for (const auto& locker : lockers)
      questions += fmt::format("{}Question: What is the code for locker {}?", questions.empty() ? "" : "\n",
                               locker.get<int>());
    const std::string instruction = lockers.size() == 1
                                        ? "Read the following text and answer the question at the end."
                                        : "Read the following text and answer the questions at the end.";
    return instruction_prompt(instruction, input_string(sample, "text"), "\n\n" + questions, "Answer:");
  }

  Grade grade(const Sample& sample, std::string_view output) const override {
    auto it = sample.record.find("answers");
    if (it == sample.record.end() || !it->is_array() || it->empty())
      fail("sample {} (record): missing list \"answers\"", sample.id);
    const std::vector<std::string> numbers = four_digit_numbers(output);
    Grade grade;
    if (numbers.empty()) return grade;
    std::string pred;
    for (const auto& number : numbers) pred += (pred.empty() ? "" : ",") + number;
    grade.pred = pred;
    int correct = 0;
    for (std::size_t f = 0; f < it->size() && f < numbers.size(); ++f) correct += (*it)[f] == numbers[f];
    grade.score = static_cast<double>(correct) / it->size();
    return grade;
  }

  std::vector<std::string> key_texts(const Sample& sample) const override {
    std::vector<std::string> facts;
    const auto& lockers = sample.record.at("lockers");
    const auto& codes = sample.record.at("answers");
    for (size_t f = 0; f < lockers.size() && f < codes.size(); ++f)
      facts.push_back(fact_sentence(lockers[f].get<int>(), codes[f].get<std::string>()));
    return facts;
  }

  // Restating the fact makes the token before the code the one that preceded it in the story, so recall is
  // induction (match " 17 is ", copy what followed).
  std::string answer_text(const Sample& sample) const override {
    std::string answer;
    for (const std::string& fact : key_texts(sample)) answer += " " + fact;
    return answer;
  }

  DecodingDefaults defaults() const override { return {/*max_new_tokens=*/32}; }
};

}  // namespace

RareFactSpec parse_rare_fact_spec(const std::string& text) {
  RareFactSpec spec;
  const GeneratedSpec generated = parse_generated_spec(text, "rare-fact", spec.samples);
  const SpecItems& items = generated.items;
  constexpr int64_t kMostPerSpec = 10'000'000;
  spec.seed = generated.seed;
  spec.samples = static_cast<int>(generated.samples);
  spec.words = items.integer("words", spec.words, 1, kMostPerSpec);
  spec.facts = items.integer("facts", spec.facts, 1, kMostPerSpec);
  if (const auto positions = items.text("positions")) spec.positions = number_list(*positions, '+', 0, 1, fmt::format("rare-fact spec \"{}\": positions", text));
  items.check_all_read();
  if (!spec.positions.empty() && static_cast<int>(spec.positions.size()) != spec.facts)
    fail("rare-fact spec \"{}\": {} positions for {} facts", text, spec.positions.size(), spec.facts);
  if (spec.facts > 99) fail("rare-fact spec \"{}\": at most 99 facts (lockers 1..99)", text);
  // Generated in memory before the run: bound the total text, not each factor alone.
  constexpr std::int64_t kMaxTotalWords = 100'000'000;
  if (std::int64_t{spec.samples} * spec.words > kMaxTotalWords)
    fail("rare-fact spec \"{}\": samples × words must be at most {}", text, kMaxTotalWords);
  return spec;
}

std::vector<Sample> generate_rare_fact_samples(const RareFactSpec& spec) {
  std::vector<Sample> samples;
  for (int i = 0; i < spec.samples; ++i) samples.push_back(generate_sample(spec, i));
  return samples;
}

std::unique_ptr<Task> make_rare_fact_task() { return std::make_unique<RareFact>(); }

}  // namespace kvbench::tasks
