#include "tokenizer/bpe_trainer.h"

#include <map>

#include "common/error.h"
#include "tokenizer/json_path.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/utf8.h"

namespace kvbench {

namespace {

const std::vector<std::string> kSpecialTokens = {"<s>", "</s>"};  // ids 0 (bos) and 1 (eos)

json pre_tokenizer_json(const std::string& split_pattern) {
  return {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"}, {"pattern", {{"Regex", split_pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}};
}

using Symbols = std::vector<std::string>;

// Word (in the byte-level alphabet) → its characters, the initial BPE symbols.
Symbols characters(const std::string& word) {
  Symbols out;
  for (std::size_t pos = 0; pos < word.size();) {
    const std::size_t length = utf8::decode(word, pos).length;
    out.push_back(word.substr(pos, length));
    pos += length;
  }
  return out;
}

// Pre-tokenized words of the corpus with their counts, split into characters.
std::map<std::string, std::pair<Symbols, long>> count_words(const std::vector<std::string>& corpus,
                                                           const std::string& split_pattern) {
  const json node = pre_tokenizer_json(split_pattern);
  const std::filesystem::path where = "<bpe trainer>";
  const PreTokenizer pre_tokenizer(tokenizer_json::Node{node, where, "pre_tokenizer"});
  std::map<std::string, std::pair<Symbols, long>> words;
  for (const auto& text : corpus)
    for (const auto& word : pre_tokenizer.split(text, /*origin_bytes=*/0)) {
      auto [it, fresh] = words.try_emplace(word, Symbols{}, 0);
      if (fresh) it->second.first = characters(word);
      ++it->second.second;
    }
  return words;
}

void apply_merge(Symbols& symbols, const std::pair<std::string, std::string>& pair) {
  Symbols merged;
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    if (i + 1 < symbols.size() && symbols[i] == pair.first && symbols[i + 1] == pair.second) {
      merged.push_back(pair.first + pair.second);
      ++i;
    } else {
      merged.push_back(symbols[i]);
    }
  }
  symbols = std::move(merged);
}

json added_tokens_json() {
  json added = json::array();
  for (std::size_t id = 0; id < kSpecialTokens.size(); ++id)
    added.push_back({{"id", id}, {"content", kSpecialTokens[id]}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", true}});
  return added;
}

json post_processor_json() {
  const json bos = {{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}};
  return {{"type", "TemplateProcessing"},
          {"single", {bos, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
          {"pair", {bos, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, bos, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
          {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {0}}, {"tokens", {"<s>"}}}}}}};
}

}  // namespace

TrainedBpe train_byte_level_bpe(const std::vector<std::string>& corpus, const BpeTrainingOptions& options) {
  auto words = count_words(corpus, options.split_pattern);
  json vocab = json::object();
  std::int64_t next_id = 0;
  const auto add_token = [&](const std::string& token) {
    if (!vocab.contains(token)) vocab[token] = next_id++;  // a merge may rebuild an existing token
  };
  for (const auto& token : kSpecialTokens) add_token(token);
  for (int byte = 0; byte < 256; ++byte) add_token(byte_level_symbol(static_cast<unsigned char>(byte)));
  json merges = json::array();
  for (int m = 0; m < options.max_merges; ++m) {
    std::map<std::pair<std::string, std::string>, long> pairs;  // ordered: ties resolve to the smallest pair
    for (const auto& [word, entry] : words)
      for (std::size_t i = 0; i + 1 < entry.first.size(); ++i) pairs[{entry.first[i], entry.first[i + 1]}] += entry.second;
    auto best = pairs.end();
    for (auto it = pairs.begin(); it != pairs.end(); ++it)
      if (best == pairs.end() || it->second > best->second) best = it;
    if (best == pairs.end() || best->second < options.min_pair_count) break;
    const auto pair = best->first;
    for (auto& [word, entry] : words) apply_merge(entry.first, pair);
    add_token(pair.first + pair.second);
    merges.push_back(pair.first + " " + pair.second);
  }
  TrainedBpe bpe;
  bpe.vocab_size = next_id;
  bpe.tokenizer = {{"version", "1.0"},
                   {"truncation", nullptr},
                   {"padding", nullptr},
                   {"added_tokens", added_tokens_json()},
                   {"normalizer", nullptr},
                   {"pre_tokenizer", pre_tokenizer_json(options.split_pattern)},
                   {"post_processor", post_processor_json()},
                   {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false},
                                {"use_regex", false}}},
                   {"model", {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr},
                              {"continuing_subword_prefix", nullptr}, {"end_of_word_suffix", nullptr},
                              {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
                              {"vocab", vocab}, {"merges", merges}}}};
  bpe.tokenizer_config = {{"bos_token", kSpecialTokens[0]}, {"eos_token", kSpecialTokens[1]},
                          {"add_bos_token", true}, {"tokenizer_class", "PreTrainedTokenizerFast"}};
  return bpe;
}

void save_tokenizer(const std::filesystem::path& dir, const TrainedBpe& bpe) {
  std::filesystem::create_directories(dir);
  write_json_file(dir / "tokenizer.json", bpe.tokenizer);
  write_json_file(dir / "tokenizer_config.json", bpe.tokenizer_config);
}

}  // namespace kvbench
