// F1 graders against cases worked out by hand from the reference Python definitions
// (SQuAD v1.1 normalize_answer / Qasper evaluator / LongBench qa_f1_score / LoCoMo evaluation.py).
#include <catch2/catch.hpp>

#include "common/error.h"
#include "tasks/graders/f1.h"

using namespace kvbench::graders;

TEST_CASE("squad_tokens lowercases, drops ASCII punctuation and whole-word articles", "[f1]") {
  CHECK(squad_tokens("The Cat's hat!") == Tokens{"cats", "hat"});
  CHECK(squad_tokens("An apple, a day.") == Tokens{"apple", "day"});
  // Articles only as whole words: "theater", "another", "ant" keep their letters.
  CHECK(squad_tokens("theater an another ant") == Tokens{"theater", "another", "ant"});
  // Punctuation goes before article removal, so "a." and "(the)" are articles too.
  CHECK(squad_tokens("a. (the) b-c") == Tokens{"bc"});
  CHECK(squad_tokens("  yes\t\nNO ") == Tokens{"yes", "no"});
  CHECK(squad_tokens("").empty());
  CHECK(squad_tokens("The a an!").empty());
}

TEST_CASE("squad_tokens follows Python's Unicode str semantics", "[f1]") {
  CHECK(squad_tokens("\xC3\x89\x63ole") == Tokens{"\xC3\xA9\x63ole"});  // "École" -> "école"
  // U+00A0 (no-break space) and U+3000 split tokens in str.split().
  CHECK(squad_tokens("one\xC2\xA0two\xE3\x80\x80three") == Tokens{"one", "two", "three"});
  // \b between "a" and an en dash (not a word character, not ASCII punctuation): re.sub gives " –b".
  CHECK(squad_tokens("a\xE2\x80\x93" "b") == Tokens{"\xE2\x80\x93" "b"});
  // ...but "é" is a word character, so "theé" is one word and keeps its "the".
  CHECK(squad_tokens("the\xC3\xA9") == Tokens{"the\xC3\xA9"});
}

TEST_CASE("token_f1 uses the multiset intersection and is 0 without overlap", "[f1]") {
  // pred [cat sat on mat], gold [cat on mat]: 3 common, P = 3/4, R = 1, F1 = 6/7.
  CHECK(squad_f1("the cat sat on the mat", "a cat on a mat") == Approx(6.0 / 7.0));
  // "yes yes" vs "yes": 1 common, P = 1/2, R = 1, F1 = 2/3.
  CHECK(squad_f1("yes yes", "Yes.") == Approx(2.0 / 3.0));
  CHECK(squad_f1("No", "no") == 1.0);
  CHECK(squad_f1("Unanswerable", "yes") == 0.0);
  CHECK(squad_f1("", "yes") == 0.0);
  CHECK(squad_f1("the", "a") == 0.0);  // both normalise to nothing: SQuAD v1.1 returns 0
  // pred [bert base model], gold [bert model]: 2 common, P = 2/3, R = 1, F1 = 0.8.
  CHECK(squad_f1("BERT base model", "BERT model") == Approx(0.8));
  // The hyphen is deleted, not a separator: pred [bertbase model], 1 common, P = R = 1/2.
  CHECK(squad_f1("BERT-base model", "BERT model") == Approx(0.5));
}

TEST_CASE("best_reference_f1 takes the max and the first reference reaching it", "[f1]") {
  const std::vector<std::string> references{"Unanswerable", "Yes", "yes"};
  auto best = best_reference_f1("Yes, it is.", references);
  // pred [yes it is] vs [yes]: P = 1/3, R = 1, F1 = 0.5; the first "Yes" wins the tie.
  CHECK(best.f1 == Approx(0.5));
  CHECK(best.index == 1);
  best = best_reference_f1("unanswerable", references);
  CHECK(best.f1 == 1.0);
  CHECK(best.index == 0);
  best = best_reference_f1("nothing matches", references);
  CHECK(best.f1 == 0.0);
  CHECK(best.index == 0);
  CHECK_THROWS_AS(best_reference_f1("x", {}), kvbench::Error);
}

TEST_CASE("locomo_tokens removes 'and' and Porter-stems", "[f1][locomo]") {
  // Porter: running -> run, runs -> run, daily -> daili (step 1c), apples/apple -> appl, pears -> pear.
  CHECK(locomo_tokens("Running, and runs daily") == Tokens{"run", "run", "daili"});
  CHECK(locomo_tokens("Apples and pears") == Tokens{"appl", "pear"});
  // Examples from Porter's paper: caresses -> caress, ponies -> poni, relational -> relat.
  CHECK(locomo_tokens("caresses ponies relational") == Tokens{"caress", "poni", "relat"});
  // Words of at most two characters are not stemmed (NLTK): "us" stays, "bus" loses its s.
  CHECK(locomo_tokens("us bus") == Tokens{"us", "bu"});
}

TEST_CASE("locomo_f1 matches inflected forms", "[f1][locomo]") {
  CHECK(locomo_f1("running", "runs") == 1.0);
  // pred [she run daili] vs gold [run daili]: P = 2/3, R = 1, F1 = 0.8.
  CHECK(locomo_f1("She runs daily.", "running daily") == Approx(0.8));
  CHECK(locomo_f1("apple, pear", "apples and pears") == 1.0);
  CHECK(locomo_f1("us", "u") == 0.0);
}

TEST_CASE("locomo category rules", "[f1][locomo]") {
  // Cat 1: gold parts [adoption agencies | pride parade]; the one prediction part matches the second.
  CHECK(locomo_score(1, "pride parades", "Adoption agencies, pride parade") == Approx(0.5));
  // Two prediction parts, each best for one gold part: (1 + 1) / 2.
  CHECK(locomo_score(1, "parade, agency", "adoption agency, pride parade") == Approx((2.0 / 3.0 + 2.0 / 3.0) / 2.0));
  // Without the split, cat 2 scores the whole strings: pred [pride parad] vs gold [adopt agenc pride parad].
  CHECK(locomo_score(2, "pride parades", "Adoption agencies, pride parade") == Approx(2.0 * 1.0 * 0.5 / 1.5));
  CHECK(locomo_score(2, "7 May 2023", "7 May, 2023") == 1.0);
  // Cat 3: only the gold text before the first ';' counts.
  CHECK(locomo_score(3, "National park", "National park; she likes the outdoors") == 1.0);
  CHECK(locomo_score(4, "National park", "National park; she likes the outdoors") < 1.0);
  // Cat 5: containment, case-insensitive; the gold is ignored.
  CHECK(locomo_score(5, "No information available.", "self-care is important") == 1.0);
  CHECK(locomo_score(5, "That is NOT MENTIONED in the conversation", "") == 1.0);
  CHECK(locomo_score(5, "self-care is important", "self-care is important") == 0.0);
  CHECK(locomo_score(5, "no info available", "") == 0.0);
  CHECK_THROWS_WITH(locomo_score(6, "x", "x"), Catch::Contains("category 6"));
}
