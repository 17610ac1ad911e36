#include "tokenizer/added_tokens.h"

#include <algorithm>

#include "tokenizer/utf8.h"

namespace kvbench {

namespace {

using pipeline_detail::is_white_space;

// Start of the whitespace run that ends at `end` (but not before `floor`).
std::size_t skip_space_backward(std::string_view text, std::size_t end, std::size_t floor) {
  while (end > floor) {
    std::size_t start = end - 1;
    while (start > floor && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    if (!is_white_space(utf8::decode(text, start).code_point)) break;
    end = start;
  }
  return end;
}

std::size_t skip_space_forward(std::string_view text, std::size_t pos) {
  while (pos < text.size()) {
    const auto decoded = utf8::decode(text, pos);
    if (!is_white_space(decoded.code_point)) break;
    pos += decoded.length;
  }
  return pos;
}

}  // namespace

AddedTokens::AddedTokens(const tokenizer_json::Node& list, const Normalizer& normalizer) {
  const std::size_t count = list.array().size();
  tokens_.reserve(count);  // the matchers point into tokens_
  for (std::size_t i = 0; i < count; ++i) {
    const auto entry = list.at(i);
    if (entry.has("single_word") && entry.at("single_word").boolean())
      entry.at("single_word").fail_here("single_word added tokens are not supported");
    const auto flag = [&](const char* name) { return entry.has(name) && entry.at(name).boolean(); };
    tokens_.push_back({entry.at("id").integer(), entry.at("content").string(), flag("special"), flag("lstrip"),
                       flag("rstrip"), flag("normalized")});
    index_by_id_[tokens_.back().id] = i;
  }
  for (const auto& token : tokens_) {
    if (token.normalized) {
      normalized_.add(normalizer.apply(token.content).text, token);
    } else {
      raw_.add(token.content, token);
    }
  }
}

const AddedToken* AddedTokens::find(std::int64_t id) const {
  const auto it = index_by_id_.find(id);
  return it == index_by_id_.end() ? nullptr : &tokens_[it->second];
}

std::optional<std::int64_t> AddedTokens::find(const std::string& content) const {
  for (const auto& token : tokens_)
    if (token.content == content) return token.id;
  return std::nullopt;
}

std::int64_t AddedTokens::max_id() const {
  std::int64_t max = -1;
  for (const auto& token : tokens_) max = std::max(max, token.id);
  return max;
}

void AddedTokens::Matcher::add(std::string pattern, const AddedToken& token) {
  if (pattern.empty()) return;
  auto& bucket = by_first_byte_[static_cast<unsigned char>(pattern[0])];
  bucket.push_back({std::move(pattern), &token});
  std::stable_sort(bucket.begin(), bucket.end(),
                   [](const Pattern& a, const Pattern& b) { return a.text.size() > b.text.size(); });
}

std::vector<Segment> AddedTokens::Matcher::split(std::string_view text) const {
  std::vector<Segment> segments;
  std::size_t done = 0;  // end of the last emitted segment
  for (std::size_t pos = 0; pos < text.size(); ++pos) {
    const Pattern* hit = nullptr;
    for (const auto& pattern : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
      if (text.compare(pos, pattern.text.size(), pattern.text) == 0) {
        hit = &pattern;
        break;
      }
    }
    if (!hit) continue;
    const std::size_t start = hit->token->lstrip ? skip_space_backward(text, pos, done) : pos;
    std::size_t end = pos + hit->text.size();
    if (hit->token->rstrip) end = skip_space_forward(text, end);
    if (start > done) segments.push_back({text.substr(done, start - done), std::nullopt});
    segments.push_back({text.substr(start, end - start), hit->token->id});
    done = end;
    pos = end - 1;
  }
  if (done < text.size()) segments.push_back({text.substr(done), std::nullopt});
  return segments;
}

}  // namespace kvbench
