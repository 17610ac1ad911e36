// Letter extraction for LongHealth (first A–E letter, as the reference) and GPQA (Answer: X, \boxed{X}, last letter).
#include <catch2/catch.hpp>

#include "tasks/graders/multiple_choice.h"

using kvbench::graders::extract_choice_letter;
using kvbench::graders::first_letter;

TEST_CASE("first_letter: the first A-E capital anywhere, as the reference does", "[tasks][mc]") {
  CHECK(first_letter("C", "ABCDE") == 'C');
  CHECK(first_letter(" E) 9.8 g/dL", "ABCDE") == 'E');
  CHECK(first_letter("The answer is D", "ABCDE") == 'D');  // 'T' and lower-case letters do not count
  CHECK(first_letter("Based on the records, A", "ABCDE") == 'B');  // the reference's quirk, kept
  CHECK(first_letter("none here", "ABCDE") == std::nullopt);
  CHECK(first_letter("", "ABCDE") == std::nullopt);
  CHECK(first_letter("F", "ABCDE") == std::nullopt);
}

TEST_CASE("extract_choice_letter: Answer: X wins, the last one counts", "[tasks][mc]") {
  CHECK(extract_choice_letter("Thinking about B and C...\nAnswer: D", "ABCD") == 'D');
  CHECK(extract_choice_letter("Answer: A\nWait, that is wrong.\nAnswer: C", "ABCD") == 'C');
  CHECK(extract_choice_letter("**Answer:** B", "ABCD") == 'B');
  CHECK(extract_choice_letter("answer: $C$", "ABCD") == 'C');
  CHECK(extract_choice_letter("Final Answer: (A)", "ABCD") == 'A');
  CHECK(extract_choice_letter("Answer: \\boxed{D}", "ABCD") == 'D');
  CHECK(extract_choice_letter("Answer:\\text{B}", "ABCD") == 'B');
  // A word starting with a letter after "Answer:" is not a letter answer; the fallback finds D.
  CHECK(extract_choice_letter("Answer: Because of D", "ABCD") == 'D');
}

TEST_CASE("extract_choice_letter: a boxed letter, then the last standalone letter", "[tasks][mc]") {
  CHECK(extract_choice_letter("so the result is \\boxed{B}. Option D is wrong", "ABCD") == 'B');
  CHECK(extract_choice_letter("\\boxed{\\text{C}}", "ABCD") == 'C');
  CHECK(extract_choice_letter("\\boxed{(A)}", "ABCD") == 'A');
  CHECK(extract_choice_letter("Options B or C; I pick C.", "ABCD") == 'C');
  CHECK(extract_choice_letter("The best choice is (B).", "ABCD") == 'B');
  // Letters inside words, LaTeX commands and out-of-range letters do not count.
  CHECK(extract_choice_letter("Because DNA and \\Delta matter, E", "ABCD") == std::nullopt);
  CHECK(extract_choice_letter("", "ABCD") == std::nullopt);
  CHECK(extract_choice_letter("answer: e", "ABCD") == std::nullopt);
}
