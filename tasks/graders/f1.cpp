#include "tasks/graders/f1.h"

#include <locale.h>
#include <wctype.h>

#include <algorithm>
#include <unordered_map>

#include "common/error.h"
#include "tasks/graders/porter.h"
#include "tokenizer/utf8.h"

namespace kvbench::graders {

namespace {

using CodePoints = std::u32string;

constexpr char32_t kReplacementCharacter = 0xFFFD;

// Decodes UTF-8; each byte of an invalid sequence becomes U+FFFD (model output may be cut mid-character).
CodePoints decode_utf8(std::string_view text) {
  CodePoints out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const utf8::DecodedChar c = utf8::decode(text, i);
    out.push_back(c.length ? c.code_point : kReplacementCharacter);
    i += c.length ? c.length : 1;
  }
  return out;
}

std::string encode_utf8(const CodePoints& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) utf8::append(out, c);
  return out;
}

// Unicode character classes come from a UTF-8 C locale, independent of the process's global locale.
locale_t unicode_ctype() {
  static const locale_t locale = [] {
    for (const char* name : {"C.UTF-8", "C.utf8", "en_US.UTF-8"}) {
      if (locale_t found = newlocale(LC_CTYPE_MASK, name, locale_t{})) return found;
    }
    fail("F1 grader: no UTF-8 locale (C.UTF-8) available for Unicode lowercasing");
  }();
  return locale;
}

// Python's str.lower() of one character: the simple mapping, except U+0130 (İ), whose full lowercase is two
// characters, "i" + U+0307. (The context-dependent final sigma is not reproduced: Σ is always σ here.)
void append_lower(CodePoints& out, char32_t c) {
  if (c == 0x130) {
    out += U"i\u0307";
    return;
  }
  out.push_back(static_cast<char32_t>(towlower_l(static_cast<wint_t>(c), unicode_ctype())));
}

// Python's string.punctuation: the 32 ASCII punctuation characters.
bool is_ascii_punctuation(char32_t c) {
  static constexpr std::string_view kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  return c < 0x80 && kPunctuation.find(static_cast<char>(c)) != std::string_view::npos;
}

// A character of re's Unicode \w (str.isalnum() or '_'): where \b puts word boundaries.
bool is_word_character(char32_t c) { return c == U'_' || iswalnum_l(static_cast<wint_t>(c), unicode_ctype()); }

// The characters str.split() splits on.
bool is_python_whitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

CodePoints lowercase_without_punctuation(std::string_view text) {
  CodePoints out;
  for (char32_t c : decode_utf8(text)) {
    if (!is_ascii_punctuation(c)) append_lower(out, c);
  }
  return out;
}

bool equals_ascii(const CodePoints& text, std::size_t begin, std::size_t end, std::string_view word) {
  return end - begin == word.size() && std::equal(word.begin(), word.end(), text.begin() + begin,
                                                  [](char a, char32_t b) { return static_cast<char32_t>(a) == b; });
}

// re.sub(r'\b(w1|w2|...)\b', ' ', text): a whole run of word characters equal to a removed word becomes ' '.
CodePoints remove_whole_words(const CodePoints& text, const std::vector<std::string_view>& words) {
  CodePoints out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!is_word_character(text[i])) {
      out.push_back(text[i++]);
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && is_word_character(text[end])) ++end;
    const bool removed = std::any_of(words.begin(), words.end(),
                                     [&](std::string_view word) { return equals_ascii(text, i, end, word); });
    if (removed) {
      out.push_back(U' ');
    } else {
      out.append(text, i, end - i);
    }
    i = end;
  }
  return out;
}

Tokens split_on_whitespace(const CodePoints& text) {
  Tokens tokens;
  CodePoints current;
  for (char32_t c : text) {
    if (!is_python_whitespace(c)) {
      current.push_back(c);
    } else if (!current.empty()) {
      tokens.push_back(encode_utf8(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(encode_utf8(current));
  return tokens;
}

std::vector<std::string_view> split_on_comma(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  for (std::size_t comma = text.find(','); comma != std::string_view::npos; comma = text.find(',', begin)) {
    parts.push_back(text.substr(begin, comma - begin));
    begin = comma + 1;
  }
  parts.push_back(text.substr(begin));
  return parts;
}

// Python's not part.strip().
bool is_blank(std::string_view part) {
  const CodePoints text = decode_utf8(part);
  return std::all_of(text.begin(), text.end(), is_python_whitespace);
}

std::vector<std::string_view> nonblank(std::vector<std::string_view> parts) {
  parts.erase(std::remove_if(parts.begin(), parts.end(), is_blank), parts.end());
  return parts;
}

// `tokens` without those equal to one of `words` (Python's [t for t in tokens if t not in {...}]).
Tokens without_tokens(Tokens tokens, const std::vector<std::string_view>& words) {
  tokens.erase(std::remove_if(tokens.begin(), tokens.end(),
                              [&](const std::string& t) { return std::find(words.begin(), words.end(), t) != words.end(); }),
               tokens.end());
  return tokens;
}

// Mean over gold parts of the best F1 against any predicted part (0 without gold parts), parts made tokens
// by `tokens_of` (the official or the paper's LoCoMo normalisation) and compared by `f1`.
double mean_best_part_f1(const std::vector<std::string_view>& predicted, const std::vector<std::string_view>& gold,
                         Tokens (*tokens_of)(std::string_view), double (*f1)(const Tokens&, const Tokens&)) {
  if (gold.empty()) return 0.0;
  // Each part is normalised and stemmed once, not once per pair: a degenerate prediction has 10^5 parts.
  std::vector<Tokens> predicted_parts;
  for (std::string_view part : predicted) predicted_parts.push_back(tokens_of(part));
  double total = 0.0;
  for (std::string_view gold_part : gold) {
    const Tokens gold_tokens = tokens_of(gold_part);
    double best = 0.0;
    for (const Tokens& tokens : predicted_parts) best = std::max(best, f1(tokens, gold_tokens));
    total += best;
  }
  return total / static_cast<double>(gold.size());
}

}  // namespace

Tokens normalized_tokens(std::string_view text, const std::vector<std::string_view>& removed_words) {
  return split_on_whitespace(remove_whole_words(lowercase_without_punctuation(text), removed_words));
}

Tokens squad_tokens(std::string_view text) { return normalized_tokens(text, {"a", "an", "the"}); }

double token_f1(const Tokens& prediction, const Tokens& gold) {
  std::unordered_map<std::string_view, int> unmatched_gold;
  for (const auto& token : gold) ++unmatched_gold[token];
  int common = 0;
  for (const auto& token : prediction) {
    auto it = unmatched_gold.find(token);
    if (it != unmatched_gold.end() && it->second > 0) {
      --it->second;
      ++common;
    }
  }
  if (common == 0) return 0.0;
  const double precision = static_cast<double>(common) / static_cast<double>(prediction.size());
  const double recall = static_cast<double>(common) / static_cast<double>(gold.size());
  return 2.0 * precision * recall / (precision + recall);
}

double squad_f1(std::string_view prediction, std::string_view gold) {
  return token_f1(squad_tokens(prediction), squad_tokens(gold));
}

BestReference best_reference(std::string_view prediction, const std::vector<std::string>& references,
                             double (*f1)(std::string_view, std::string_view)) {
  if (references.empty()) fail("F1 grader: no reference answers to compare with");
  BestReference best;
  for (std::size_t i = 0; i < references.size(); ++i) {
    const double value = f1(prediction, references[i]);
    if (i == 0 || value > best.f1) best = {value, i};
  }
  return best;
}

BestReference best_reference_f1(std::string_view prediction, const std::vector<std::string>& references) {
  return best_reference(prediction, references, squad_f1);
}

Tokens locomo_tokens(std::string_view text) {
  Tokens tokens = normalized_tokens(text, {"a", "an", "the", "and"});
  for (auto& token : tokens) token = encode_utf8(nltk_porter_stem(decode_utf8(token)));
  return tokens;
}

double locomo_f1(std::string_view prediction, std::string_view gold) {
  return token_f1(locomo_tokens(prediction), locomo_tokens(gold));
}

double locomo_multi_answer_f1(std::string_view prediction, std::string_view gold) {
  return mean_best_part_f1(split_on_comma(prediction), split_on_comma(gold), locomo_tokens, token_f1);
}

bool locomo_abstains(std::string_view prediction) {
  CodePoints lowered;
  for (char32_t c : decode_utf8(prediction)) append_lower(lowered, c);
  const std::string text = encode_utf8(lowered);
  return text.find("no information available") != std::string::npos || text.find("not mentioned") != std::string::npos;
}

double locomo_score(int category, std::string_view prediction, std::string_view gold) {
  switch (category) {
    case 1: return locomo_multi_answer_f1(prediction, gold);
    case 2:
    case 4: return locomo_f1(prediction, gold);
    case 3: return locomo_f1(prediction, gold.substr(0, gold.find(';')));
    case 5: return locomo_abstains(prediction) ? 1.0 : 0.0;
    default: fail("LoCoMo grader: unknown category {} (expected 1-5)", category);
  }
}

double paper_token_f1(const Tokens& prediction, const Tokens& gold) {
  return prediction.empty() && gold.empty() ? 1.0 : token_f1(prediction, gold);
}

Tokens locomo_paper_tokens(std::string_view text) {
  Tokens tokens = without_tokens(split_on_whitespace(lowercase_without_punctuation(text)), {"a", "an", "the", "and"});
  for (auto& token : tokens) token = encode_utf8(nltk_porter_stem(decode_utf8(token)));
  return tokens;
}

double locomo_paper_score(int category, std::string_view prediction, std::string_view gold) {
  const auto f1 = [](std::string_view p, std::string_view g) {
    return paper_token_f1(locomo_paper_tokens(p), locomo_paper_tokens(g));
  };
  switch (category) {
    case 1: {
      auto predicted_parts = nonblank(split_on_comma(prediction));
      if (predicted_parts.empty()) predicted_parts = {prediction};  // `... or [pred]`
      return mean_best_part_f1(predicted_parts, nonblank(split_on_comma(gold)), locomo_paper_tokens, paper_token_f1);
    }
    case 2:
    case 3:
    case 4: return f1(prediction, gold);
    case 5: return locomo_abstains(prediction) ? 1.0 : 0.0;
    default: fail("LoCoMo grader: unknown category {} (expected 1-5)", category);
  }
}

Tokens qasper_paper_tokens(std::string_view text) {
  Tokens tokens = split_on_whitespace(lowercase_without_punctuation(text));
  if (!tokens.empty() && (tokens[0] == "unanswerable" || tokens[0] == "yes" || tokens[0] == "no")) {
    tokens.resize(1);
    return tokens;
  }
  return without_tokens(std::move(tokens), {"a", "an", "the"});
}

double qasper_paper_f1(std::string_view prediction, std::string_view gold) {
  return paper_token_f1(qasper_paper_tokens(prediction), qasper_paper_tokens(gold));
}

std::string python_strip(std::string_view text) {
  std::size_t begin = text.size(), end = 0;  // byte range of the first to the last non-whitespace character
  for (std::size_t i = 0; i < text.size();) {
    const utf8::DecodedChar c = utf8::decode(text, i);
    const std::size_t next = i + (c.length ? c.length : 1);
    if (!c.length || !is_python_whitespace(c.code_point)) {  // an invalid byte is U+FFFD to Python: not space
      begin = std::min(begin, i);
      end = next;
    }
    i = next;
  }
  return begin < end ? std::string(text.substr(begin, end - begin)) : std::string();
}

}  // namespace kvbench::graders
