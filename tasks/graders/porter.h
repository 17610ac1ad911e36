// The Porter stemmer as NLTK's PorterStemmer() runs it (mode NLTK_EXTENSIONS, nltk 3.x), which LoCoMo's
// task_eval/evaluation.py uses. Not libstemmer's (Snowball) "porter": that is the original 1980 algorithm
// and differs on common words — "day" → "dai", "play" → "plai", "age" → "ag", "use" → "us", "try" and
// "why" unchanged, "hopefully" → "hopefulli" — where NLTK gives "day", "play", "age", "use", "tri",
// "whi", "hope". NLTK's extensions: irregular forms ("dying" → "die", "news", "succeed"), y → i only
// after a consonant that is not the first letter, "ies"/"ied" → "ie" in four-letter words, a two-letter
// vowel-consonant stem counts as cvc, step 2's "bli", "alli" (recursive), "fulli", "logi", every doubled
// consonant undoubled in step 1b, and words of at most two letters unchanged.
#pragma once
#include <string>

namespace kvbench::graders {

// `word` as code points, lowercase (NLTK compares characters of Python's str; a non-ASCII letter is a
// consonant to it).
std::u32string nltk_porter_stem(const std::u32string& word);

}  // namespace kvbench::graders
