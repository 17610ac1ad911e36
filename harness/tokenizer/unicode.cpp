#include "tokenizer/unicode.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tokenizer/utf8.h"

namespace kvbench::unicode {

namespace {

struct CanonicalDecomposition {
  char32_t code_point, first, second;  // second == 0: singleton
  bool recomposes;
};
struct CombiningClassRange {
  char32_t first, last;
  std::uint8_t combining_class;
};
struct Expansion {
  char32_t code_point;
  std::uint16_t offset, length;  // into kExpansionChars
};
#include "tokenizer/unicode_tables.inc"

// Hangul syllables decompose and compose arithmetically (Unicode §3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

int combining_class(char32_t cp) {
  const auto* end = std::end(kCombiningClasses);
  const auto* it = std::upper_bound(std::begin(kCombiningClasses), end, cp,
                                    [](char32_t c, const CombiningClassRange& r) { return c < r.first; });
  if (it == std::begin(kCombiningClasses)) return 0;
  --it;
  return cp <= it->last ? it->combining_class : 0;
}

const CanonicalDecomposition* find_decomposition(char32_t cp) {
  const auto* end = std::end(kDecompositions);
  const auto* it = std::lower_bound(std::begin(kDecompositions), end, cp,
                                    [](const CanonicalDecomposition& d, char32_t c) { return d.code_point < c; });
  return it != end && it->code_point == cp ? it : nullptr;
}

// The table entry for `cp` in a table of Expansion sorted by code point, or null.
template <std::size_t N>
const Expansion* find_expansion(const Expansion (&table)[N], char32_t cp) {
  const auto* it = std::lower_bound(std::begin(table), std::end(table), cp,
                                    [](const Expansion& e, char32_t c) { return e.code_point < c; });
  return it != std::end(table) && it->code_point == cp ? it : nullptr;
}

void append_expansion(const Expansion& e, std::vector<char32_t>& out) {
  out.insert(out.end(), kExpansionChars + e.offset, kExpansionChars + e.offset + e.length);
}

// Full canonical decomposition (the table's pairs applied recursively: at most a few levels deep, fixed by
// Unicode, not by the input), or with `compatibility` the full compatibility decomposition.
void decompose(char32_t cp, bool compatibility, std::vector<char32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t index = cp - kSBase;
    out.push_back(kLBase + index / kNCount);
    out.push_back(kVBase + (index % kNCount) / kTCount);
    if (index % kTCount != 0) out.push_back(kTBase + index % kTCount);
    return;
  }
  if (compatibility) {
    if (const auto* e = find_expansion(kCompatibilityExpansions, cp)) return append_expansion(*e, out);
  }
  const auto* d = find_decomposition(cp);
  if (!d) {
    out.push_back(cp);
    return;
  }
  decompose(d->first, compatibility, out);
  if (d->second != 0) decompose(d->second, compatibility, out);
}

std::uint64_t pair_key(char32_t first, char32_t second) { return (std::uint64_t{first} << 32) | second; }

const std::unordered_map<std::uint64_t, char32_t>& compositions() {
  static const auto table = [] {
    std::unordered_map<std::uint64_t, char32_t> map;
    for (const auto& d : kDecompositions)
      if (d.recomposes) map.emplace(pair_key(d.first, d.second), d.code_point);
    return map;
  }();
  return table;
}

char32_t compose_pair(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount)
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  const bool lv_syllable = first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0;
  if (lv_syllable && second > kTBase && second < kTBase + kTCount) return first + (second - kTBase);
  const auto it = compositions().find(pair_key(first, second));
  return it == compositions().end() ? 0 : it->second;
}

// Stable sort of each run of non-starters by combining class (canonical ordering).
void reorder(std::vector<char32_t>& chars) {
  for (std::size_t start = 0; start < chars.size();) {
    if (combining_class(chars[start]) == 0) {
      ++start;
      continue;
    }
    std::size_t end = start;
    while (end < chars.size() && combining_class(chars[end]) != 0) ++end;
    std::stable_sort(chars.begin() + start, chars.begin() + end,
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    start = end;
  }
}

// Canonical composition: a character joins the last starter unless a character in between
// (necessarily a non-starter, already in canonical order) has a combining class >= its own.
void compose(std::vector<char32_t>& chars) {
  std::size_t starter = 0, out = 0;
  bool have_starter = false;
  int last_class = 0;
  for (const char32_t c : chars) {
    const int cls = combining_class(c);
    const bool blocked = out - 1 != starter && last_class >= cls;
    if (have_starter && !blocked) {
      if (const char32_t composed = compose_pair(chars[starter], c)) {
        chars[starter] = composed;
        continue;
      }
    }
    if (cls == 0) starter = out, have_starter = true;
    last_class = cls;
    chars[out++] = c;
  }
  chars.resize(out);
}

bool is_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// Decomposition (canonical or compatibility), canonical ordering, and optionally canonical composition.
std::string normalize(std::string_view text, bool compatibility, bool composed) {
  if (is_ascii(text)) return std::string(text);  // the common case: nothing can change
  std::vector<char32_t> chars;
  chars.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const auto decoded = utf8::decode(text, pos);
    decompose(decoded.code_point, compatibility, chars);
    pos += decoded.length;
  }
  reorder(chars);
  if (composed) compose(chars);
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : chars) utf8::append(out, cp);
  return out;
}

}  // namespace

std::string to_nfc(std::string_view text) { return normalize(text, false, true); }
std::string to_nfd(std::string_view text) { return normalize(text, false, false); }
std::string to_nfkc(std::string_view text) { return normalize(text, true, true); }
std::string to_nfkd(std::string_view text) { return normalize(text, true, false); }

std::string to_lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const auto decoded = utf8::decode(text, pos);
    if (const auto* e = find_expansion(kLowercaseExpansions, decoded.code_point)) {
      for (std::uint16_t i = 0; i < e->length; ++i) utf8::append(out, kExpansionChars[e->offset + i]);
    } else {
      out.append(text.substr(pos, decoded.length));
    }
    pos += decoded.length;
  }
  return out;
}

}  // namespace kvbench::unicode
