// Answer equivalence: normalised strings, then structure (tuples, intervals, sets, unions, matrices),
// then numeric evaluation of both sides at shared variable values.
//
// Conventions (chosen to follow math_verify):
// - A bare list "1, 2" is a set (order-insensitive), as math_verify parses it; "a \pm b" is the list
//   "a+b, a-b". A parenthesised tuple "(1, 2)" is ordered; against a bare list it compares in order.
// - Intervals compare endpoints in order and their bracket types must agree: [1,2) != [1,2].
// - Equations compare as equations: both sides moved left, equal up to a nonzero factor
//   (y = 2x + 3 equals 2y - 4x = 6). "x = 5" against a bare "5" compares the right side.
// - Numbers agree within a relative tolerance of 1e-6; expressions with variables are evaluated at a
//   few fixed points. Words compare case-insensitively (\text{East} = east).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "tasks/graders/math.h"
#include "tasks/graders/math_internal.h"

namespace kvbench::graders {

using namespace math_detail;

namespace {

constexpr double kRelativeTolerance = 1e-6;
constexpr double kAbsoluteTolerance = 1e-12;  // rounding noise around zero: \sin\pi is 1.2e-16
constexpr double kZeroTolerance = 1e-9;       // an equation's side this small is zero at that point

// Answers longer than this are compared byte for byte, not parsed: no gold answer comes close (MATH500's
// longest is 53 bytes), and it bounds the time and nesting a degenerate generation can cost the grader.
constexpr std::size_t kMaxParsedAnswer = 1024;
// "a \pm b \pm c ..." expands to 2^k items; past this many signs the item stays as written.
constexpr int kMaxPlusMinus = 4;

bool values_close(Value a, Value b) {
  bool a_finite = std::isfinite(a.real()) && std::isfinite(a.imag());
  bool b_finite = std::isfinite(b.real()) && std::isfinite(b.imag());
  if (!a_finite || !b_finite) {  // only infinities of the same sign agree; NaN never does
    return std::isinf(a.real()) && a.real() == b.real() && a.imag() == 0 && b.imag() == 0;
  }
  double scale = std::max(std::abs(a), std::abs(b));
  return std::abs(a - b) <= kRelativeTolerance * scale || std::abs(a - b) <= kAbsoluteTolerance;
}

// Deterministic, irregular values so that distinct polynomials do not agree by chance.
std::vector<Assignment> sample_points(const std::vector<std::string>& variables, int count) {
  std::vector<Assignment> points(count);
  for (int k = 0; k < count; ++k)
    for (std::size_t j = 0; j < variables.size(); ++j)
      points[k][variables[j]] = 0.35 + std::fmod(0.6180339887 * (7 * k + 3 * j + 1), 1.0) * 1.7 + 0.13 * k;
  return points;
}

std::vector<std::string> shared_variables(const Expr& a, const Expr& b) {
  std::vector<std::string> names;
  collect_variables(a, names);
  collect_variables(b, names);
  return names;
}

bool expressions_equal(const Expr& a, const Expr& b) {
  bool compared = false;
  for (const Assignment& point : sample_points(shared_variables(a, b), 4)) {
    Value x = evaluate(a, point), y = evaluate(b, point);
    if (std::isnan(x.real()) && std::isnan(y.real())) continue;  // outside both domains
    if (!values_close(x, y)) return false;
    compared = true;
  }
  return compared;
}

bool is_word(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == ' ';
  });
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_integer_text(std::string_view text);
std::string canonical_integer(std::string_view text);

bool scalars_equal(const std::string& a, const std::string& b) {
  if (a == b) return true;
  // Integers are exact: 1250001 is not 1250000, though within the relative tolerance.
  if (is_integer_text(a) && is_integer_text(b)) return canonical_integer(a) == canonical_integer(b);
  if (is_word(a) && is_word(b)) return lowercase(a) == lowercase(b);
  auto x = parse_expression(a), y = parse_expression(b);
  return x && y && expressions_equal(*x, *y);
}

// ---- Equations ----

struct Equation {
  std::string left, right;
};

std::optional<Equation> as_equation(const std::string& text) {
  auto sides = split_top_level(text, "=");
  if (sides.size() != 2 || sides[0].empty() || sides[1].empty()) return std::nullopt;
  return Equation{sides[0], sides[1]};
}

// lhs - rhs of one equation is a constant nonzero multiple of the other's.
bool equations_equal(const Equation& a, const Equation& b) {
  auto parse_difference = [](const Equation& e) -> std::optional<Expr> {
    auto left = parse_expression(e.left), right = parse_expression(e.right);
    if (!left || !right) return std::nullopt;
    return parse_expression("(" + e.left + ")-(" + e.right + ")");
  };
  auto f = parse_difference(a), g = parse_difference(b);
  if (!f || !g) return false;
  std::optional<Value> ratio;
  for (const Assignment& point : sample_points(shared_variables(*f, *g), 5)) {
    Value x = evaluate(*f, point), y = evaluate(*g, point);
    if (std::abs(x) <= kZeroTolerance && std::abs(y) <= kZeroTolerance) continue;
    if (std::abs(y) <= kZeroTolerance) return false;
    Value r = x / y;
    if (ratio && !values_close(*ratio, r)) return false;
    ratio = r;
  }
  return ratio.has_value() && std::abs(*ratio) > kZeroTolerance;
}

// ---- Structure ----

struct Answer {
  enum Kind { Scalar, Ordered, Unordered, Matrix, Union } kind = Scalar;
  char open = 0, close = 0;                        // Ordered: the brackets, e.g. '[' and ')'
  std::vector<std::string> items;                  // Scalar: one; Ordered/Unordered: the elements
  std::vector<std::vector<std::string>> rows;      // Matrix
  std::vector<Answer> parts;                       // Union
};

Answer with_items(Answer::Kind kind, std::vector<std::string> items, char open = 0, char close = 0) {
  Answer answer;
  answer.kind = kind;
  answer.items = std::move(items);
  answer.open = open;
  answer.close = close;
  return answer;
}

int count_plus_minus(const std::string& item) {
  int count = 0;
  for (std::string_view sign : {"\\pm", "\\mp"})
    for (std::size_t at = item.find(sign); at != std::string::npos; at = item.find(sign, at + 1)) ++count;
  return count;
}

// "a \pm b" becomes a+b and a-b (each \pm or \mp once, left to right).
std::vector<std::string> expand_plus_minus(const std::string& item) {
  for (std::string_view sign : {"\\pm", "\\mp"}) {
    std::size_t at = item.find(sign);
    if (at == std::string::npos) continue;
    std::string head = item.substr(0, at), tail = item.substr(at + sign.size());
    auto plus = expand_plus_minus(head + (sign == "\\pm" ? "+" : "-") + tail);
    auto minus = expand_plus_minus(head + (sign == "\\pm" ? "-" : "+") + tail);
    plus.insert(plus.end(), minus.begin(), minus.end());
    return plus;
  }
  return {item};
}

std::vector<std::string> list_items(std::string_view text) {
  std::vector<std::string> items;
  for (const std::string& item : split_top_level(text, ","))
    if (count_plus_minus(item) > kMaxPlusMinus) {
      items.push_back(item);
    } else {
      for (std::string& expanded : expand_plus_minus(item)) items.push_back(std::move(expanded));
    }
  return items;
}

// \begin{pmatrix}...\end{pmatrix} (any matrix environment), or an array inside brackets.
std::optional<Answer> parse_matrix(const std::string& text) {
  static const Regex environment(R"(^\\begin\{([pbvBV]?matrix|array)\}(?:\{[^{}]*\})?(.*)\\end\{\1\}$)");
  bool bracketed =
      text.size() > 2 && (text[0] == '[' || text[0] == '(') && matching_bracket(text, 0) == text.size() - 1;
  if (bracketed) return parse_matrix(text.substr(1, text.size() - 2));
  if (!environment.search(text)) return std::nullopt;
  std::size_t body_start = text.find('}') + 1;
  if (text.compare(7, 5, "array") == 0) body_start = matching_brace(text, body_start) + 1;
  std::string body = text.substr(body_start, text.rfind("\\end{") - body_start);
  Answer matrix;
  matrix.kind = Answer::Matrix;
  if (text.compare(7, 7, "vmatrix") == 0 || text.compare(7, 7, "Vmatrix") == 0)
    matrix.open = '|';  // bars are a determinant (or norm), not the matrix
  for (std::string& row : split_top_level(body, "\\\\")) {
    if (row.empty()) continue;  // a trailing "\\" before \end
    matrix.rows.push_back(split_top_level(row, "&"));
  }
  return matrix;
}

Answer parse_answer(const std::string& text) {
  if (auto parts = split_top_level(text, "\\cup"); parts.size() > 1) {
    Answer answer;
    answer.kind = Answer::Union;
    for (const std::string& part : parts) answer.parts.push_back(parse_answer(part));
    return answer;
  }
  if (auto matrix = parse_matrix(text)) return *matrix;
  std::size_t size = text.size();
  if (size >= 4 && text.compare(0, 2, "\\{") == 0 && text.compare(size - 2, 2, "\\}") == 0 &&
      matching_bracket(text, 1) == size - 1)
    return with_items(Answer::Unordered, list_items(std::string_view(text).substr(2, size - 4)));
  if (size >= 2 && (text[0] == '(' || text[0] == '[') && (text.back() == ')' || text.back() == ']') &&
      matching_bracket(text, 0) == size - 1) {
    auto items = split_top_level(std::string_view(text).substr(1, size - 2), ",");
    if (items.size() > 1) return with_items(Answer::Ordered, items, text[0], text.back());
  }
  auto items = list_items(text);
  if (items.size() > 1) return with_items(Answer::Unordered, items);
  return with_items(Answer::Scalar, {text});
}

bool answers_equal(const Answer& a, const Answer& b);

bool items_in_order_equal(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!answers_equal(parse_answer(a[i]), parse_answer(b[i]))) return false;
  return true;
}

// Each element of one side pairs with a distinct element of the other (greedy suffices for
// equivalence classes).
template <class T, class Equal>
bool unordered_equal(const std::vector<T>& a, const std::vector<T>& b, Equal equal) {
  if (a.size() != b.size()) return false;
  std::vector<bool> used(b.size(), false);
  for (const T& x : a) {
    bool matched = false;
    for (std::size_t j = 0; j < b.size() && !matched; ++j) {
      if (!used[j] && equal(x, b[j])) used[j] = matched = true;
    }
    if (!matched) return false;
  }
  return true;
}

bool answers_equal(const Answer& a, const Answer& b) {
  auto item_equal = [](const std::string& x, const std::string& y) {
    return answers_equal(parse_answer(x), parse_answer(y));
  };
  if (a.kind == Answer::Scalar && b.kind == Answer::Scalar) return scalars_equal(a.items[0], b.items[0]);
  if (a.kind == Answer::Union && b.kind == Answer::Union) return unordered_equal(a.parts, b.parts, answers_equal);
  if (a.kind == Answer::Matrix && b.kind == Answer::Matrix) {
    if (a.rows.size() != b.rows.size() || a.open != b.open) return false;
    for (std::size_t r = 0; r < a.rows.size(); ++r)
      if (!items_in_order_equal(a.rows[r], b.rows[r])) return false;
    return true;
  }
  if (a.kind == Answer::Ordered && b.kind == Answer::Ordered)
    return a.open == b.open && a.close == b.close && items_in_order_equal(a.items, b.items);
  if (a.kind == Answer::Unordered && b.kind == Answer::Unordered) return unordered_equal(a.items, b.items, item_equal);
  // A point written without its parentheses: "3, \frac{\pi}{2}" for (3, \frac{\pi}{2}).
  auto is_tuple = [](const Answer& x) { return x.kind == Answer::Ordered && x.open == '(' && x.close == ')'; };
  auto is_bare_list = [](const Answer& x) { return x.kind == Answer::Unordered; };
  if ((is_tuple(a) && is_bare_list(b)) || (is_bare_list(a) && is_tuple(b)))
    return items_in_order_equal(a.items, b.items);
  return false;
}

bool is_integer_text(std::string_view text) {
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// "-007" → "-7"; "-0" → "0".
std::string canonical_integer(std::string_view text) {
  bool negative = text[0] == '-';
  if (text[0] == '-' || text[0] == '+') text.remove_prefix(1);
  std::size_t first = text.find_first_not_of('0');
  if (first == std::string_view::npos) return "0";
  return (negative ? "-" : "") + std::string(text.substr(first));
}

}  // namespace

bool math_equal(std::string_view prediction, std::string_view gold) {
  if (prediction.size() > kMaxParsedAnswer || gold.size() > kMaxParsedAnswer) return prediction == gold;
  std::string pred = clean_math_answer(prediction), answer = clean_math_answer(gold);
  if (pred.empty() || answer.empty()) return false;
  if (strip_variable_prefix(pred) == strip_variable_prefix(answer)) return true;
  auto pred_equation = as_equation(pred), gold_equation = as_equation(answer);
  if (pred_equation && gold_equation && equations_equal(*pred_equation, *gold_equation)) return true;
  return answers_equal(parse_answer(strip_variable_prefix(pred)), parse_answer(strip_variable_prefix(answer)));
}

bool integer_equal(std::string_view prediction, std::string_view gold) {
  if (prediction.size() > kMaxParsedAnswer || gold.size() > kMaxParsedAnswer) return prediction == gold;
  std::string pred = normalize_math_answer(prediction), answer = normalize_math_answer(gold);
  if (!is_integer_text(pred) || !is_integer_text(answer)) return false;
  return canonical_integer(pred) == canonical_integer(answer);
}

}  // namespace kvbench::graders
