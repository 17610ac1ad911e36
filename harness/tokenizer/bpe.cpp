#include "tokenizer/bpe.h"

#include <functional>
#include <limits>
#include <queue>

#include "common/error.h"
#include "tokenizer/utf8.h"

namespace kvbench {

namespace {

constexpr std::size_t kMaxCachedWordBytes = 256;
constexpr std::size_t kMaxCacheEntries = 200000;

std::uint64_t pair_key(std::int64_t left, std::int64_t right) {
  return (static_cast<std::uint64_t>(left) << 32) | static_cast<std::uint64_t>(right);
}

// HF's unsupported BPE options fail loudly rather than tokenizing differently.
void require_unset(const tokenizer_json::Node& model, const std::string& name) {
  if (model.has(name) && !(model.value.at(name).is_string() && model.value.at(name).get<std::string>().empty()))
    model.at(name).fail_here("not supported (kvbench's BPE needs it null or empty)");
}

}  // namespace

BpeModel::BpeModel(const tokenizer_json::Node& model) {
  if (model.type() != "BPE") model.unsupported_type();
  require_unset(model, "dropout");
  require_unset(model, "continuing_subword_prefix");
  require_unset(model, "end_of_word_suffix");
  load_vocab(model.at("vocab"));
  load_merges(model.at("merges"));
  if (model.has("unk_token")) {
    const auto unk = model.at("unk_token");
    unk_id_ = token_to_id(unk.string());
    if (!unk_id_) unk.fail_here("token \"" + unk.string() + "\" is not in the vocabulary");
  }
  fuse_unk_ = model.has("fuse_unk") && model.at("fuse_unk").boolean();
  byte_fallback_ = model.has("byte_fallback") && model.at("byte_fallback").boolean();
  ignore_merges_ = model.has("ignore_merges") && model.at("ignore_merges").boolean();
  for (int byte = 0; byte < 256; ++byte) byte_ids_[byte] = token_to_id(fmt::format("<0x{:02X}>", byte));
}

void BpeModel::load_vocab(const tokenizer_json::Node& vocab) {
  if (!vocab.value.is_object()) vocab.fail_here("expected an object mapping tokens to ids");
  vocab_.reserve(vocab.value.size());
  for (const auto& [token, id_value] : vocab.value.items()) {
    const std::int64_t id = tokenizer_json::Node{id_value, vocab.file, vocab.path + "." + token}.integer();
    if (id < 0 || id > std::numeric_limits<std::int32_t>::max()) vocab.fail_here("id out of range for " + token);
    vocab_.emplace(token, id);
    if (static_cast<std::size_t>(id) >= id_to_token_.size()) id_to_token_.resize(id + 1);
    id_to_token_[id] = token;
  }
}

// Merges come as "left right" strings (older files) or as [left, right] pairs; their order is the rank.
void BpeModel::load_merges(const tokenizer_json::Node& merges) {
  const auto& list = merges.array();
  merges_.reserve(list.size());
  for (std::size_t rank = 0; rank < list.size(); ++rank) {
    const auto entry = merges.at(rank);
    std::string left, right;
    if (entry.value.is_string()) {
      const std::string text = entry.string();
      const auto space = text.find(' ');
      if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos)
        entry.fail_here("expected \"left right\"");
      left = text.substr(0, space);
      right = text.substr(space + 1);
    } else if (entry.value.is_array() && entry.value.size() == 2) {
      left = entry.at(std::size_t{0}).string();
      right = entry.at(std::size_t{1}).string();
    } else {
      entry.fail_here("expected \"left right\" or [left, right]");
    }
    const auto left_id = token_to_id(left), right_id = token_to_id(right), merged_id = token_to_id(left + right);
    if (!left_id || !right_id || !merged_id) entry.fail_here("merge of tokens missing from the vocabulary");
    merges_.emplace(pair_key(*left_id, *right_id), Merge{static_cast<std::int32_t>(rank), *merged_id});
  }
}

std::optional<std::int64_t> BpeModel::token_to_id(const std::string& token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(std::int64_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= id_to_token_.size() || id_to_token_[id].empty()) return nullptr;
  return &id_to_token_[id];
}

const BpeModel::Merge* BpeModel::find_merge(std::int64_t left, std::int64_t right) const {
  const auto it = merges_.find(pair_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

// One symbol per character; characters outside the vocabulary become <0xNN> byte tokens (byte
// fallback) or the unknown token (consecutive ones fused when fuse_unk), as HF's BPE does.
std::vector<BpeModel::Symbol> BpeModel::initial_symbols(std::string_view word) const {
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  bool last_is_unk = false;
  for (std::size_t pos = 0; pos < word.size();) {
    const std::size_t length = utf8::decode(word, pos).length;
    const std::string character(word.substr(pos, length));
    pos += length;
    if (const auto id = token_to_id(character)) {
      symbols.push_back({*id, length});
      last_is_unk = false;
      continue;
    }
    if (byte_fallback_) {
      bool all_bytes_known = true;
      for (unsigned char byte : character) all_bytes_known = all_bytes_known && byte_ids_[byte].has_value();
      if (all_bytes_known) {
        for (unsigned char byte : character) symbols.push_back({*byte_ids_[byte], 1});
        last_is_unk = false;
        continue;
      }
    }
    if (!unk_id_) fail("tokenizer: character \"{}\" is not in the vocabulary and the model has no unk_token", character);
    if (fuse_unk_ && last_is_unk) {
      symbols.back().byte_length += length;
    } else {
      symbols.push_back({*unk_id_, length});
    }
    last_is_unk = true;
  }
  return symbols;
}

// Applies merges lowest rank first (leftmost on ties) with a heap over a linked list of symbols:
// O(n log n), so that a whole unsplit text (sentencepiece-style models have no pre-tokenizer) stays cheap.
std::vector<std::int64_t> BpeModel::merge(std::vector<Symbol> symbols) const {
  const std::size_t n = symbols.size();
  std::vector<std::ptrdiff_t> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (std::size_t i = 0; i < n; ++i) prev[i] = static_cast<std::ptrdiff_t>(i) - 1, next[i] = i + 1 < n ? i + 1 : -1;

  struct Candidate {
    std::int32_t rank;
    std::size_t left;
    std::int64_t merged_id;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : left > other.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto push_pair = [&](std::ptrdiff_t left) {
    if (left < 0 || next[left] < 0) return;
    if (const Merge* m = find_merge(symbols[left].id, symbols[next[left]].id))
      queue.push({m->rank, static_cast<std::size_t>(left), m->merged_id});
  };
  for (std::size_t i = 0; i + 1 < n; ++i) push_pair(static_cast<std::ptrdiff_t>(i));

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    const std::size_t left = top.left;
    if (!alive[left] || next[left] < 0) continue;
    const auto right = static_cast<std::size_t>(next[left]);
    const Merge* current = find_merge(symbols[left].id, symbols[right].id);
    if (!current || current->merged_id != top.merged_id) continue;  // stale: a neighbour merged first
    symbols[left] = {top.merged_id, symbols[left].byte_length + symbols[right].byte_length};
    alive[right] = false;
    next[left] = next[right];
    if (next[left] >= 0) prev[next[left]] = static_cast<std::ptrdiff_t>(left);
    push_pair(prev[left]);
    push_pair(static_cast<std::ptrdiff_t>(left));
  }

  std::vector<std::int64_t> ids;
  for (std::ptrdiff_t i = n ? 0 : -1; i >= 0; i = next[i]) ids.push_back(symbols[i].id);
  return ids;
}

void BpeModel::encode_word(std::string_view word, std::vector<std::int64_t>& ids) const {
  if (word.empty()) return;
  const std::string key(word);
  if (ignore_merges_) {
    if (const auto id = token_to_id(key)) {
      ids.push_back(*id);
      return;
    }
  }
  const bool cacheable = word.size() <= kMaxCachedWordBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (const auto it = cache_.find(key); it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const auto word_ids = merge(initial_symbols(word));
  ids.insert(ids.end(), word_ids.begin(), word_ids.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.size() >= kMaxCacheEntries) cache_.clear();
    cache_.emplace(key, word_ids);
  }
}

}  // namespace kvbench
