// Needle in a haystack as a grid: one needle (RULER's niah_single_1 needle: a word key, a 7-digit value) at a
// chosen depth of a haystack of a chosen length in the model's tokens, every depth × length, `samples` each.
//   niah:lengths=1024+2048+4096,depths=0+25+50+75+100[,samples=1][,seed=0][,haystack=noise|essay][,essay=FILE]
// Depth d% puts the needle before haystack line (or essay sentence) round(d% of them). The prompt, answer
// prefix and scoring are RULER's; `kvbench report --table niah` and scripts/plot_niah.py draw the grid.
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "tasks/ruler/families.h"
#include "tasks/task_support.h"

namespace kvbench::tasks {

namespace {

struct NiahSpec {
  std::vector<int64_t> lengths;
  std::vector<double> depths;  // percent
  int64_t samples = 1;
  uint64_t seed = 0;
  std::string haystack = "noise";
  std::filesystem::path essay;
};

template <class T>
std::vector<T> plus_list(const SpecItems& items, const std::string& key, const std::string& fallback, T min, T max) {
  std::vector<T> values;
  const std::string text = items.text(key).value_or(fallback);
  for (std::size_t from = 0; from <= text.size();) {
    const std::size_t end = std::min(text.find('+', from), text.size());
    const std::string item = text.substr(from, end - from);
    try {
      std::size_t used = 0;
      const double value = std::stod(item, &used);
      if (used != item.size() || !(value >= min && value <= max) || (std::is_integral_v<T> && value != std::floor(value)))
        throw std::invalid_argument(item);
      values.push_back(static_cast<T>(value));
    } catch (const std::exception&) {
      fail("{}: {} must be numbers in {}..{} joined by '+' (got \"{}\")", items.context(), key, min, max, item);
    }
    from = end + 1;
  }
  return values;
}

NiahSpec parse_niah_spec(const std::string& text) {
  const GeneratedSpec generated = parse_generated_spec(text, "niah", 1);
  const SpecItems& items = generated.items;
  NiahSpec spec;
  spec.lengths = plus_list<int64_t>(items, "lengths", "1024+2048+4096", 128, 10'000'000);
  spec.depths = plus_list<double>(items, "depths", "0+25+50+75+100", 0.0, 100.0);
  spec.samples = generated.samples;
  spec.seed = generated.seed;
  spec.haystack = items.choice("haystack", spec.haystack, {"noise", "essay"});
  spec.essay = items.text("essay").value_or("");
  items.check_all_read();
  if (spec.haystack == "essay" && spec.essay.empty())
    fail("{}: the essay haystack needs essay=PATH (a text file)", items.context());
  return spec;
}

// Sample `index` of a length: depth depths[index % depths], one needle at it.
class DepthNeedle : public ruler::Family {
 public:
  DepthNeedle(const NiahSpec& spec, std::vector<std::string> essay) : spec_(spec), essay_(std::move(essay)) {}

  ruler::Text make(int64_t size, int64_t index, SplitMix64& rng) const override {
    const std::string key = ruler::random_needle("words", rng), value = ruler::random_needle("numbers", rng);
    const std::string needle = ruler::needle_sentence("numbers", key, value);
    const double depth = spec_.depths[index % spec_.depths.size()] / 100.0;
    std::vector<std::string> pieces = essay_.empty() ? ruler::noise_lines(size) : ruler::essay_sentences(essay_, size);
    pieces.insert(pieces.begin() + static_cast<int64_t>(std::nearbyint(depth * pieces.size())), needle);
    const std::string context = fmt::format("{}", fmt::join(pieces, essay_.empty() ? "\n" : " "));
    return ruler::niah_text(context, key, "numbers", /*singular=*/true, {value}, {needle});
  }

  int64_t smallest_size() const override { return essay_.empty() ? 5 : 100; }  // noise sentences, essay words

 private:
  NiahSpec spec_;
  std::vector<std::string> essay_;
};

constexpr int kTokensToGenerate = 32;

class Niah : public Task {
 public:
  std::string name() const override { return "niah"; }
  std::string default_dataset() const override { return "niah:lengths=1024+2048+4096,depths=0+25+50+75+100"; }
  bool reads_dataset() const override { return false; }

  std::vector<Sample> load(const std::filesystem::path& path) const override {
    fail("niah: {} is sized in the model's tokens, so it needs the model's tokenizer to be generated",
         path.string());
  }

  std::vector<Sample> load(const std::filesystem::path& path, const TokenCounter& count_tokens) const override {
    if (!count_tokens) return load(path);
    const auto found = spec_in_path(path, "niah");
    if (!found) fail("niah: --data must be a niah spec (niah:lengths=…,depths=…), got {}", path.string());
    const NiahSpec spec = parse_niah_spec(found->spec);
    const DepthNeedle family(spec, spec.essay.empty() ? std::vector<std::string>{} : ruler::essay_words(spec.essay));
    std::vector<Sample> samples;
    const auto per_length = static_cast<int64_t>(spec.depths.size()) * spec.samples;
    for (const int64_t length : spec.lengths) {
      const std::string stream = fmt::format("niah at {} (seed {})", length, spec.seed);
      auto texts = ruler::fitted_texts(family, stream, length, kTokensToGenerate, per_length, count_tokens);
      for (std::size_t i = 0; i < texts.size(); ++i) {
        const double depth = spec.depths[i % spec.depths.size()];
        const std::string id = fmt::format("s{}/L{}/d{}/{}", spec.seed, length, depth, i / spec.depths.size());
        Sample sample = ruler::to_sample(id, "niah", std::move(texts[i].text), texts[i].length, length);
        sample.record["depth"] = depth;
        samples.push_back(std::move(sample));
      }
    }
    return samples;
  }

  Prompt prompt(const Sample& sample) const override { return make_task("ruler")->prompt(sample); }
  Grade grade(const Sample& sample, std::string_view output) const override {
    return make_task("ruler")->grade(sample, output);
  }
  std::vector<std::string> key_texts(const Sample& sample) const override {
    return sample.record.value("key_texts", std::vector<std::string>{});
  }
  DecodingDefaults defaults() const override { return {kTokensToGenerate}; }
};

}  // namespace

std::unique_ptr<Task> make_niah_task() { return std::make_unique<Niah>(); }

}  // namespace kvbench::tasks
