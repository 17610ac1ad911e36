// Math grader: extraction, normalisation, equivalence (hand-written cases) and MATH500 self-consistency.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tasks/graders/math.h"
#include "test_support.h"

using namespace kvbench::graders;

namespace {

struct EquivalenceCase {
  std::string prediction, gold;
  bool expected;
  int line;
};

// tests/data/math_equivalence.tsv: prediction<TAB>gold<TAB>1|0; '#' lines and blank lines are comments.
std::vector<EquivalenceCase> read_cases(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<EquivalenceCase> cases;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::size_t first = line.find('\t'), second = line.find('\t', first + 1);
    INFO(path.string() << ":" << number);
    REQUIRE(second != std::string::npos);
    std::string verdict = line.substr(second + 1);
    REQUIRE((verdict == "1" || verdict == "0"));
    cases.push_back({line.substr(0, first), line.substr(first + 1, second - first - 1), verdict == "1", number});
  }
  return cases;
}

}  // namespace

TEST_CASE("last_boxed matches nested braces and ignores escaped ones", "[math]") {
  CHECK(last_boxed(R"(so $\boxed{\frac{1}{2}}$.)") == R"(\frac{1}{2})");
  CHECK(last_boxed(R"(\boxed{\frac{\sqrt{3}}{{2}}})") == R"(\frac{\sqrt{3}}{{2}})");
  CHECK(last_boxed(R"(\boxed{\{1,2\}})") == R"(\{1,2\})");
  CHECK(last_boxed(R"(\boxed{\left\{ 3 \right\}} and more)") == R"(\left\{ 3 \right\})");
  CHECK(last_boxed(R"(\boxed{\begin{pmatrix} 1 \\ 2 \end{pmatrix}})") == R"(\begin{pmatrix} 1 \\ 2 \end{pmatrix})");
  CHECK(last_boxed(R"(first \boxed{1}, then \boxed{2}.)") == "2");
  CHECK(last_boxed(R"(\fbox{7})") == "7");
  CHECK(last_boxed("The answer is \\boxed 5$.") == "5");
  CHECK(last_boxed("The answer is \\boxed 5") == "5");
  CHECK(last_boxed(R"(\boxed{})") == "");
  CHECK_FALSE(last_boxed("no box here").has_value());
  // An unclosed last box (a generation cut short) leaves the earlier complete one.
  CHECK(last_boxed(R"(\boxed{3} but wait \boxed{\frac{1}{2})") == "3");
  CHECK_FALSE(last_boxed(R"(\boxed{\frac{1}{2})").has_value());
  CHECK_FALSE(last_boxed(R"(\boxed{a \} b)").has_value());  // \} is text, so the box is still open
}

TEST_CASE("has_complete_boxed is the MATH500 stop condition", "[math]") {
  CHECK_FALSE(has_complete_boxed("Let x = 2. So the answer is \\boxed{"));
  CHECK_FALSE(has_complete_boxed("So the answer is \\boxed{\\frac{1}{2}"));
  CHECK(has_complete_boxed("So the answer is \\boxed{\\frac{1}{2}}"));
  CHECK_FALSE(has_complete_boxed("So the answer is \\boxed 12"));  // the number may still grow
  CHECK_FALSE(has_complete_boxed("So the answer is \\boxed 12."));  // 12.5 may follow
  CHECK(has_complete_boxed("So the answer is \\boxed 12.\n"));
}

TEST_CASE("extract_math_answer on model-style outputs", "[math]") {
  const char* chain_of_thought = R"(We need $f(-2)+f(-1)+f(0)$.

Step 1: $f(-2) = \frac{-8}{-4} = 2$.
Step 2: $f(-1) = \frac{-5}{-3} = \frac{5}{3}$.
Step 3: $f(0) = 1$.

Adding, $2 + \frac{5}{3} + 1 = \frac{14}{3}$. Therefore the answer is $\boxed{\frac{14}{3}}$.)";
  CHECK(extract_math_answer(chain_of_thought) == R"(\frac{14}{3})");
  CHECK(math_equal(*extract_math_answer(chain_of_thought), "\\frac{14}{3}"));

  CHECK(extract_math_answer("Final Answer: The final answer is $28 \\%$. I hope it is correct.") == "28 \\%");
  CHECK(extract_math_answer("so the polar form is (3, pi/2).\nThe answer is 42.") == "42");
  CHECK(extract_math_answer("The answer is: 3.5 meters. Next problem") == "3.5 meters");
  CHECK(extract_math_answer("the answer is \\(\\frac{1}{2}\\) and done") == "\\frac{1}{2}");
  // A box wins over the phrase; the last phrase wins over earlier ones.
  CHECK(extract_math_answer("The answer is 3. Actually \\boxed{4}") == "4");
  CHECK(extract_math_answer("The answer is 3. No, the answer is 5.") == "5");
  CHECK_FALSE(extract_math_answer("I could not solve this problem.").has_value());
  CHECK_FALSE(extract_math_answer("Step 1: let \\boxed{x").has_value());
}

TEST_CASE("normalize_math_answer canonical forms", "[math]") {
  CHECK(normalize_math_answer(R"(\left( 3, \frac{\pi}{2} \right))") == R"((3,\frac{\pi}{2}))");
  CHECK(normalize_math_answer(R"(\dfrac12)") == R"(\frac{1}{2})");
  CHECK(normalize_math_answer(R"(\tfrac{3}{4})") == R"(\frac{3}{4})");
  CHECK(normalize_math_answer(R"(\frac{270}7\text{ degrees})") == R"(\frac{270}{7})");
  CHECK(normalize_math_answer(R"(\sqrt2)") == R"(\sqrt{2})");
  CHECK(normalize_math_answer(R"(11 \sqrt 2)") == R"(11\sqrt{2})");
  CHECK(normalize_math_answer(R"(90^\circ)") == "90");
  CHECK(normalize_math_answer(R"(90^{\circ})") == "90");
  CHECK(normalize_math_answer("90\u00b0") == "90");
  CHECK(normalize_math_answer(R"(10\%)") == "10");
  CHECK(normalize_math_answer("$5$.") == "5");
  CHECK(normalize_math_answer("5.0") == "5");
  CHECK(normalize_math_answer("2.50") == "2.5");
  CHECK(normalize_math_answer(".5") == "0.5");
  CHECK(normalize_math_answer("x = 5") == "5");
  CHECK(normalize_math_answer("y = 2x + 3") == "2x+3");
  CHECK(normalize_math_answer(R"(x \in [-2,7])") == "[-2,7]");
  CHECK(normalize_math_answer(R"(10,\!080)") == "10080");
  CHECK(normalize_math_answer(R"(\$32,\!348)") == "32348");
  CHECK(normalize_math_answer("1,-2") == "1,-2");  // a list, not a thousands separator
  CHECK(normalize_math_answer("3, 5, 7") == "3,5,7");
  CHECK(normalize_math_answer(R"(\text{(C)})") == "C");
  CHECK(normalize_math_answer(R"(\text{Evelyn})") == "Evelyn");
  CHECK(normalize_math_answer(R"(864 \mbox{ inches}^2)") == "864");
  CHECK(normalize_math_answer(R"(5.4 \text{ cents})") == "5.4");
  CHECK(normalize_math_answer(R"(\pi r^2)") == R"(\pi r^2)");  // a space that separates a command stays
  CHECK(normalize_math_answer(R"(\boxed{\frac{1}{2}})") == R"(\frac{1}{2})");
  CHECK(normalize_math_answer(R"(\begin{pmatrix} 1 \\ 2 \end{pmatrix})") == R"(\begin{pmatrix}1\\2\end{pmatrix})");
}

TEST_CASE("math_equal on hand-written MATH500 variants (tests/data/math_equivalence.tsv)", "[math]") {
  auto cases = read_cases(kvbench::testing::source_dir() / "tests/data/math_equivalence.tsv");
  std::size_t unequal = 0;
  for (const auto& c : cases) {
    INFO("line " << c.line << ": [" << c.prediction << "] vs gold [" << c.gold << "]");
    CHECK(math_equal(c.prediction, c.gold) == c.expected);
    CHECK(math_equal(c.gold, c.prediction) == c.expected);  // the verdict must not depend on the side
    unequal += !c.expected;
  }
  CHECK(cases.size() >= 300);
  CHECK(unequal * 3 >= cases.size());
}

TEST_CASE("math_equal edge cases", "[math]") {
  CHECK_FALSE(math_equal("", "0"));
  CHECK_FALSE(math_equal("5", ""));
  CHECK_FALSE(math_equal("x", "y"));
  CHECK_FALSE(math_equal(R"(\frac{1}{0})", "1"));
  CHECK_FALSE(math_equal(R"(\infty)", R"(-\infty)"));
  CHECK(math_equal(R"(\infty)", R"(\infty)"));
  CHECK(math_equal(R"(\sqrt[3]{-8})", "-2"));
  CHECK(math_equal(R"(\sqrt[3]{27})", "3"));
  CHECK(math_equal(R"(\log_2 8)", "3"));
  CHECK(math_equal(R"(\ln e^2)", "2"));
  CHECK(math_equal(R"(\sin^2 x + \cos^2 x)", "1"));
  CHECK(math_equal(R"(|-3|)", "3"));
  CHECK(math_equal(R"(2^{25} \cdot 26!)", R"(26! \cdot 2^{25})"));
  CHECK(math_equal(R"(\sqrt{\frac{95}{24}})", R"(\frac{\sqrt{570}}{12})"));
  CHECK(math_equal(R"(\sin \pi)", "0"));
  CHECK(math_equal("x = 5+5+1 = 11", "11"));  // a chain of steps: its last side
  CHECK(math_equal(R"(x = \frac{1}{3} \approx 0.33)", R"(\frac13)"));  // the exact value before \approx
  CHECK(math_equal("f(x) = 2x+3", "3+2x"));
  CHECK_FALSE(math_equal("1,2,3", "1,2"));
  CHECK_FALSE(math_equal("(1,2)", "[1,2]"));
  CHECK(math_equal("(1,2),(3,4)", "(3,4),(1,2)"));
  CHECK_FALSE(math_equal("(1,2),(3,4)", "(2,1),(3,4)"));
}

TEST_CASE("integer_equal: AIME answers compare as integers", "[math]") {
  CHECK(integer_equal("025", "25"));
  CHECK(integer_equal("25", "025"));
  CHECK(integer_equal("$073$", "73"));
  CHECK(integer_equal("0", "000"));
  CHECK(integer_equal("1,000", "1000"));
  CHECK(integer_equal("204.0", "204"));
  CHECK_FALSE(integer_equal("25", "250"));
  CHECK_FALSE(integer_equal("-25", "25"));
  CHECK_FALSE(integer_equal("25.5", "25"));
  CHECK_FALSE(integer_equal("\\frac{50}{2}", "25"));
  CHECK_FALSE(integer_equal("twenty-five", "25"));
  CHECK_FALSE(integer_equal("", "0"));
  // Longer than any machine integer: compared as digit strings.
  CHECK(integer_equal("000123456789012345678901234567890", "123456789012345678901234567890"));
}

TEST_CASE("MATH500: each gold equals itself and its solution's last box", "[math][shared]") {
  KVBENCH_REQUIRE_SHARED("datasets/math500/test.jsonl");
  std::ifstream in(kvbench::testing::shared_dir() / "datasets/math500/test.jsonl");
  std::string line;
  std::size_t records = 0, boxed_agree = 0;
  std::ostringstream disagreements;
  while (std::getline(in, line)) {
    auto record = nlohmann::json::parse(line);
    std::string answer = record.at("answer"), solution = record.at("solution");
    ++records;
    INFO(record.at("unique_id").get<std::string>() << ": " << answer);
    CHECK(math_equal(answer, answer));
    auto boxed = last_boxed(solution);
    if (boxed && math_equal(*boxed, answer)) {
      ++boxed_agree;
    } else {
      disagreements << record.at("unique_id").get<std::string>() << ": boxed [" << boxed.value_or("<none>")
                    << "] vs answer [" << answer << "]\n";
    }
  }
  CHECK(records == 500);
  INFO(boxed_agree << "/" << records << " agree; disagreements:\n" << disagreements.str());
  CHECK(boxed_agree * 100 >= records * 98);
}

TEST_CASE("Grader fixes found against math-verify (tests/peers/README.md)", "[math]") {
  // An output JSON-escaped once too often: every backslash doubled.
  CHECK(extract_math_answer(R"(The answer is $\\boxed{\\frac{14}{3}}$.)") == R"(\frac{14}{3})");
  CHECK(extract_math_answer(R"(\\boxed{\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}})") ==
        R"(\begin{pmatrix} 1 \\ 2 \end{pmatrix})");
  CHECK(extract_math_answer(R"(\boxed{\begin{pmatrix} 1 \\ 2 \end{pmatrix}})") ==
        R"(\begin{pmatrix} 1 \\ 2 \end{pmatrix})");  // a line break alone is not escaping
  // An escaped dollar inside a $...$ answer after "the final answer is".
  CHECK(extract_math_answer(R"(The final answer is $\$18.90$.)") == R"(\$18.90)");
  // Bars are a determinant, not the matrix.
  CHECK_FALSE(math_equal(R"(\begin{vmatrix} 1 & 2 \\ 3 & 4 \end{vmatrix})", R"(\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix})"));
  CHECK(math_equal(R"(\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix})", R"(\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix})"));
  // Answers joined by "and" are a list; "58 and 500" is not 58,500.
  CHECK(math_equal(R"(-2 \text{ and } 1)", "-2, 1"));
  CHECK(math_equal("1 and 3 and 5", "5, 3, 1"));
  CHECK_FALSE(math_equal(R"(58 \text{ and } 500)", "58,500"));
  // A labelled tuple.
  CHECK(math_equal(R"((p, q) = (-\sqrt{3}, \sqrt{3}))", R"((-\sqrt{3}, \sqrt{3}))"));
  CHECK_FALSE(math_equal(R"((p, q) = (\sqrt{3}, -\sqrt{3}))", R"((-\sqrt{3}, \sqrt{3}))"));
  // Integers are exact, though within the relative tolerance.
  CHECK_FALSE(math_equal("1250001", "1250000"));
  CHECK(math_equal("1250000.0", "1250000"));
}
