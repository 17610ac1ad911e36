// A line-by-line port of nltk/stem/porter.py (PorterStemmer, mode NLTK_EXTENSIONS): the rule order and
// "the first rule whose suffix matches decides, even when its condition fails" are NLTK's.
#include "tasks/graders/porter.h"

#include <map>
#include <string_view>

namespace kvbench::graders {

namespace {

using Word = std::u32string;
using Suffix = std::u32string_view;
using Condition = bool (*)(const Word& stem);

struct Rule {
  Suffix suffix, replacement;
  Condition condition = nullptr;  // on the word without the suffix; nullptr: always
};

bool is_vowel(char32_t c) { return c == U'a' || c == U'e' || c == U'i' || c == U'o' || c == U'u'; }

// 'y' is a consonant at the start and after a vowel; each 'y' of a run flips it (NLTK counts the run
// instead of recursing, and so does this: a generated "yyyy…" must not exhaust the stack).
bool is_consonant(const Word& word, std::size_t i) {
  if (is_vowel(word[i])) return false;
  if (word[i] != U'y') return true;
  bool negate = false;
  for (; i > 0 && word[i] == U'y'; --i) negate = !negate;
  return !is_vowel(word[i]) != negate;
}

// m in [C](VC)^m[V]: the number of vowel-consonant transitions.
int measure(const Word& stem) {
  int m = 0;
  bool previous_vowel = false;
  for (std::size_t i = 0; i < stem.size(); ++i) {
    const bool consonant = is_consonant(stem, i);
    if (consonant && previous_vowel) ++m;
    previous_vowel = !consonant;
  }
  return m;
}

bool positive_measure(const Word& stem) { return measure(stem) > 0; }
bool measure_above_one(const Word& stem) { return measure(stem) > 1; }

bool contains_vowel(const Word& stem) {
  for (std::size_t i = 0; i < stem.size(); ++i)
    if (!is_consonant(stem, i)) return true;
  return false;
}

bool ends_with(const Word& word, Suffix suffix) {
  return word.size() >= suffix.size() && Suffix(word).substr(word.size() - suffix.size()) == suffix;
}

Word without(const Word& word, Suffix suffix) { return word.substr(0, word.size() - suffix.size()); }

bool ends_double_consonant(const Word& word) {
  const std::size_t n = word.size();
  return n >= 2 && word[n - 1] == word[n - 2] && is_consonant(word, n - 1);
}

// NLTK's extension: a two-letter vowel-consonant word counts as cvc ("age" keeps its e).
bool ends_cvc(const Word& word) {
  const std::size_t n = word.size();
  if (n == 2) return !is_consonant(word, 0) && is_consonant(word, 1);
  return n >= 3 && is_consonant(word, n - 3) && !is_consonant(word, n - 2) && is_consonant(word, n - 1) &&
         word[n - 1] != U'w' && word[n - 1] != U'x' && word[n - 1] != U'y';
}

Word apply_rules(const Word& word, std::initializer_list<Rule> rules) {
  for (const Rule& rule : rules) {
    if (!ends_with(word, rule.suffix)) continue;
    const Word stem = without(word, rule.suffix);
    return !rule.condition || rule.condition(stem) ? stem + Word(rule.replacement) : word;
  }
  return word;
}

Word step1a(const Word& word) {
  if (word.size() == 4 && ends_with(word, U"ies")) return without(word, U"ies") + U"ie";
  return apply_rules(word, {{U"sses", U"ss"}, {U"ies", U"i"}, {U"ss", U"ss"}, {U"s", U""}});
}

Word step1b(const Word& word) {
  if (ends_with(word, U"ied")) return without(word, U"ied") + (word.size() == 4 ? U"ie" : U"i");
  if (ends_with(word, U"eed")) {
    const Word stem = without(word, U"eed");
    return measure(stem) > 0 ? stem + U"ee" : word;
  }
  Word stem;
  if (ends_with(word, U"ed") && contains_vowel(without(word, U"ed"))) stem = without(word, U"ed");
  else if (ends_with(word, U"ing") && contains_vowel(without(word, U"ing"))) stem = without(word, U"ing");
  else return word;
  for (const auto& [suffix, replacement] : {std::pair<Suffix, Suffix>{U"at", U"ate"}, {U"bl", U"ble"}, {U"iz", U"ize"}})
    if (ends_with(stem, suffix)) return without(stem, suffix) + Word(replacement);
  if (ends_double_consonant(stem)) {
    const char32_t last = stem.back();
    return last == U'l' || last == U's' || last == U'z' ? stem : stem.substr(0, stem.size() - 1);
  }
  return measure(stem) == 1 && ends_cvc(stem) ? stem + U"e" : stem;
}

// NLTK's extension: y → i only after a consonant that is not the word's first letter ("day" stays).
Word step1c(const Word& word) {
  return apply_rules(word, {{U"y", U"i", [](const Word& stem) {
                               return stem.size() > 1 && is_consonant(stem, stem.size() - 1);
                             }}});
}

Word step2(const Word& word) {
  if (ends_with(word, U"alli") && positive_measure(without(word, U"alli")))
    return step2(without(word, U"alli") + U"al");
  return apply_rules(word, {{U"ational", U"ate", positive_measure}, {U"tional", U"tion", positive_measure},
                            {U"enci", U"ence", positive_measure}, {U"anci", U"ance", positive_measure},
                            {U"izer", U"ize", positive_measure}, {U"bli", U"ble", positive_measure},
                            {U"alli", U"al", positive_measure}, {U"entli", U"ent", positive_measure},
                            {U"eli", U"e", positive_measure}, {U"ousli", U"ous", positive_measure},
                            {U"ization", U"ize", positive_measure}, {U"ation", U"ate", positive_measure},
                            {U"ator", U"ate", positive_measure}, {U"alism", U"al", positive_measure},
                            {U"iveness", U"ive", positive_measure}, {U"fulness", U"ful", positive_measure},
                            {U"ousness", U"ous", positive_measure}, {U"aliti", U"al", positive_measure},
                            {U"iviti", U"ive", positive_measure}, {U"biliti", U"ble", positive_measure},
                            {U"fulli", U"ful", positive_measure},
                            // NLTK tests the measure of the word without "ogi", i.e. the stem + "l".
                            {U"logi", U"log", [](const Word& stem) { return positive_measure(stem + U"l"); }}});
}

Word step3(const Word& word) {
  return apply_rules(word, {{U"icate", U"ic", positive_measure}, {U"ative", U"", positive_measure},
                            {U"alize", U"al", positive_measure}, {U"iciti", U"ic", positive_measure},
                            {U"ical", U"ic", positive_measure}, {U"ful", U"", positive_measure},
                            {U"ness", U"", positive_measure}});
}

Word step4(const Word& word) {
  const Condition m1 = measure_above_one;
  return apply_rules(word, {{U"al", U"", m1}, {U"ance", U"", m1}, {U"ence", U"", m1}, {U"er", U"", m1},
                            {U"ic", U"", m1}, {U"able", U"", m1}, {U"ible", U"", m1}, {U"ant", U"", m1},
                            {U"ement", U"", m1}, {U"ment", U"", m1}, {U"ent", U"", m1},
                            {U"ion", U"", [](const Word& stem) {
                               return measure(stem) > 1 && (stem.back() == U's' || stem.back() == U't');
                             }},
                            {U"ou", U"", m1}, {U"ism", U"", m1}, {U"ate", U"", m1}, {U"iti", U"", m1},
                            {U"ous", U"", m1}, {U"ive", U"", m1}, {U"ize", U"", m1}});
}

Word step5a(const Word& word) {
  if (!ends_with(word, U"e")) return word;
  const Word stem = without(word, U"e");
  const int m = measure(stem);
  return m > 1 || (m == 1 && !ends_cvc(stem)) ? stem : word;
}

Word step5b(const Word& word) {
  return apply_rules(word, {{U"ll", U"l", [](const Word& stem) { return measure(stem + U"l") > 1; }}});
}

// NLTK's irregular forms, returned as they are without any step.
const std::map<Word, Word>& irregular_forms() {
  static const std::map<Word, Word> pool = {
      {U"sky", U"sky"},         {U"skies", U"sky"},       {U"dying", U"die"},       {U"lying", U"lie"},
      {U"tying", U"tie"},       {U"news", U"news"},       {U"innings", U"inning"},  {U"inning", U"inning"},
      {U"outings", U"outing"},  {U"outing", U"outing"},   {U"cannings", U"canning"}, {U"canning", U"canning"},
      {U"howe", U"howe"},       {U"proceed", U"proceed"}, {U"exceed", U"exceed"},   {U"succeed", U"succeed"}};
  return pool;
}

}  // namespace

std::u32string nltk_porter_stem(const std::u32string& word) {
  const auto irregular = irregular_forms().find(word);
  if (irregular != irregular_forms().end()) return irregular->second;
  if (word.size() <= 2) return word;
  return step5b(step5a(step4(step3(step2(step1c(step1b(step1a(word))))))));
}

}  // namespace kvbench::graders
