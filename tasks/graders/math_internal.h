// Internals shared by the math grader's source files (math_*.cpp); not part of the grader's API.
#pragma once
#include <complex>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct pcre2_real_code_8;

namespace kvbench::graders::math_detail {

// A compiled PCRE2 pattern (UTF-8). Compile once (function-local static); matching is thread-safe.
class Regex {
 public:
  explicit Regex(std::string_view pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  // Every match replaced; `replacement` uses PCRE2 syntax ($1, ${1}); an unset group inserts nothing.
  std::string replace_all(std::string_view text, std::string_view replacement) const;
  bool search(std::string_view text) const;
  // Start and end offsets of each match, in order.
  std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view text) const;

 private:
  pcre2_real_code_8* code_;
};

// Index of the '}' matching the '{' at `open`, or npos. A backslash escapes the next character, so
// \{ and \} count as text and \\ (a LaTeX line break) does not escape the brace after it.
std::size_t matching_brace(std::string_view text, std::size_t open);

// Index of the bracket closing the one at `open`: any of ( [ { opens and any of ) ] } closes, so the
// half-open interval "[1,2)" matches. npos when unbalanced.
std::size_t matching_bracket(std::string_view text, std::size_t open);

// Splits on `separator` where it occurs outside every bracket pair.
std::vector<std::string> split_top_level(std::string_view text, std::string_view separator);

// Normalisation without dropping a "x =" prefix: math_equal first compares equations as equations.
std::string clean_math_answer(std::string_view latex);
// Drops a leading "x =", "f(x) =", "x \in" (one variable named, no second '=').
std::string strip_variable_prefix(std::string_view answer);

// ---- Expressions: LaTeX arithmetic, parsed once and evaluated at chosen variable values. ----
using Value = std::complex<double>;
using Assignment = std::map<std::string, Value>;

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

// nullopt when the text is not an arithmetic expression this parser understands.
std::optional<Expr> parse_expression(std::string_view latex);
Value evaluate(const Expr& expr, const Assignment& variables);
// Names of the free variables (x, y_1, \theta, ...).
void collect_variables(const Expr& expr, std::vector<std::string>& names);

}  // namespace kvbench::graders::math_detail
