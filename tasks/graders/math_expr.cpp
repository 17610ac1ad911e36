// A recursive-descent parser and evaluator for the LaTeX arithmetic found in final answers:
// numbers, \frac, \sqrt[n], ^, \cdot/\times/\div, implicit products (2\sqrt{3}, 3\pi, (a+5)(b+2)),
// factorials, unary signs, \pi, e, i, functions (\sin, \ln, \log_b, ...), |x|, \binom, mixed numbers.
// Values are complex so that sqrt(-1) and answers like 6-5i evaluate; comparison happens elsewhere.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

#include "tasks/graders/math_internal.h"

namespace kvbench::graders::math_detail {

enum class Op { Constant, Variable, Negate, Add, Subtract, Multiply, Divide, Power, Root, Factorial, Function };

struct ExprNode {
  Op op;
  Value value{};
  std::string name;  // variable or function name
  std::vector<Expr> args;
};

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kE = 2.71828182845904523536;

const std::set<std::string>& function_names() {
  static const std::set<std::string> names = {"sin",  "cos",  "tan",  "cot",  "sec",    "csc", "arcsin",
                                              "arccos", "arctan", "sinh", "cosh", "tanh", "ln",  "log",
                                              "exp"};
  return names;
}

const std::set<std::string>& greek_letters() {
  static const std::set<std::string> names = {
      "alpha", "beta",  "gamma",   "delta", "epsilon", "varepsilon", "zeta",  "eta",   "theta", "vartheta",
      "iota",  "kappa", "lambda",  "mu",    "nu",      "xi",         "rho",   "sigma", "tau",   "upsilon",
      "phi",   "varphi", "chi",    "psi",   "omega",   "Gamma",      "Delta", "Theta", "Lambda", "Xi",
      "Sigma", "Phi",   "Psi",     "Omega"};
  return names;
}

struct ParseFailure {};

// Nesting deeper than any real answer fails the parse (the text is then compared as text): recursion
// depth must never follow the input (\boxed{((((...} from a degenerate generation).
constexpr int kMaxNesting = 64;

// strtod, not std::stod: a 400-digit integer is a huge value, not an exception escaping the grader.
double to_double(const std::string& digits) { return std::strtod(digits.c_str(), nullptr); }

Expr make(Op op, std::vector<Expr> args = {}, std::string name = {}, Value value = {}) {
  return std::make_shared<const ExprNode>(ExprNode{op, value, std::move(name), std::move(args)});
}
Expr constant(Value value) { return make(Op::Constant, {}, {}, value); }

struct Token {
  enum Kind { Number, Letter, Command, Symbol, End } kind;
  std::string text;
  bool is(Kind k, std::string_view t) const { return kind == k && text == t; }
};

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i < text.size();) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '\\' && i + 1 < text.size() && letter(text[i + 1])) {
      std::size_t end = i + 1;
      while (end < text.size() && letter(text[end])) ++end;
      tokens.push_back({Token::Command, std::string(text.substr(i, end - i))});
      i = end;
    } else if (digit(c) || (c == '.' && i + 1 < text.size() && digit(text[i + 1]))) {
      std::size_t end = i;
      bool seen_point = false;
      while (end < text.size() && (digit(text[end]) || (text[end] == '.' && !seen_point && end + 1 < text.size() &&
                                                        digit(text[end + 1])))) {
        seen_point |= text[end] == '.';
        ++end;
      }
      tokens.push_back({Token::Number, std::string(text.substr(i, end - i))});
      i = end;
    } else if (letter(c)) {
      tokens.push_back({Token::Letter, std::string(1, c)});
      ++i;
    } else if (std::string_view("+-*/^_()[]{}|!").find(c) != std::string_view::npos) {
      tokens.push_back({Token::Symbol, std::string(1, c)});
      ++i;
    } else {
      throw ParseFailure{};  // '=', ',', '<', "\\", "\{", non-ASCII ...: not a single expression
    }
  }
  tokens.push_back({Token::End, ""});
  return tokens;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Expr parse_all() {
    Expr expr = parse_sum();
    if (peek().kind != Token::End) throw ParseFailure{};
    return expr;
  }

 private:
  const Token& peek(std::size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  Token next() { return tokens_[std::min(pos_++, tokens_.size() - 1)]; }
  bool accept(Token::Kind kind, std::string_view text) {
    if (!peek().is(kind, text)) return false;
    ++pos_;
    return true;
  }
  void expect(Token::Kind kind, std::string_view text) {
    if (!accept(kind, text)) throw ParseFailure{};
  }
  bool accept_symbol(std::string_view s) { return accept(Token::Symbol, s); }

  // Counts one level of the recursive descent for as long as it lives.
  class Nesting {
   public:
    explicit Nesting(int& depth) : depth_(depth) {
      if (++depth_ > kMaxNesting) throw ParseFailure{};
    }
    ~Nesting() { --depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    int& depth_;
  };

  // Every cycle of the grammar passes through parse_sum (groups), parse_primary (commands such as
  // \frac\frac..., \sin\sin...), parse_signed (sign chains) or parse_exponent (exponent chains), so
  // guarding these four bounds the depth.
  Expr parse_sum() {
    Nesting nesting(depth_);
    Expr lhs = parse_product();
    while (true) {
      if (accept_symbol("+")) {
        lhs = make(Op::Add, {lhs, parse_product()});
      } else if (accept_symbol("-")) {
        lhs = make(Op::Subtract, {lhs, parse_product()});
      } else {
        return lhs;
      }
    }
  }

  Expr parse_product() {
    Expr lhs = parse_signed();
    while (true) {
      if (accept_symbol("*") || accept(Token::Command, "\\cdot") || accept(Token::Command, "\\times")) {
        lhs = make(Op::Multiply, {lhs, parse_signed()});
      } else if (accept_symbol("/") || accept(Token::Command, "\\div")) {
        lhs = make(Op::Divide, {lhs, parse_signed()});
      } else if (starts_factor(peek())) {
        lhs = make(Op::Multiply, {lhs, parse_power()});
      } else {
        return lhs;
      }
    }
  }

  Expr parse_signed() {
    Nesting nesting(depth_);
    if (accept_symbol("-")) return make(Op::Negate, {parse_signed()});
    if (accept_symbol("+")) return parse_signed();
    return parse_power();
  }

  Expr parse_power() {
    Expr base = parse_postfix();
    if (accept_symbol("^")) return make(Op::Power, {base, parse_exponent()});
    return base;
  }

  // A superscript: a braced group, a signed exponent, or one atom (the whole number in 2^10).
  Expr parse_exponent() {
    Nesting nesting(depth_);
    if (accept_symbol("-")) return make(Op::Negate, {parse_exponent()});
    return parse_postfix();
  }

  Expr parse_postfix() {
    Expr expr = parse_primary();
    while (accept_symbol("!")) expr = make(Op::Factorial, {expr});
    return expr;
  }

  bool starts_factor(const Token& token) const {
    switch (token.kind) {
      case Token::Number:
      case Token::Letter:
        return true;
      case Token::Symbol:
        return token.text == "(" || token.text == "{";
      case Token::Command:
        return is_value_command(token.text);
      default:
        return false;
    }
  }

  static bool is_value_command(const std::string& command) {
    static const std::set<std::string> values = {"\\frac", "\\sqrt", "\\pi", "\\infty", "\\binom"};
    std::string name = command.substr(1);
    return values.count(command) || function_names().count(name) || greek_letters().count(name);
  }

  Expr parse_group(std::string_view open, std::string_view close) {
    expect(Token::Symbol, open);
    Expr inner = parse_sum();
    expect(Token::Symbol, close);
    return inner;
  }

  // A command argument: {group} or, as in LaTeX, one character or command (\log_28 is log base 2 of 8).
  Expr parse_argument() {
    if (peek().is(Token::Symbol, "{")) return parse_group("{", "}");
    Token token = next();
    if (token.kind == Token::Number && std::isdigit(static_cast<unsigned char>(token.text[0]))) {
      if (token.text.size() > 1) tokens_[--pos_].text = token.text.substr(1);  // the rest stays a number
      return constant(token.text[0] - '0');
    }
    if (token.kind == Token::Letter) return letter_value(token.text);
    if (token.kind == Token::Command) {
      --pos_;
      return parse_primary();
    }
    throw ParseFailure{};
  }

  Expr parse_primary() {
    Nesting nesting(depth_);
    Token token = next();
    switch (token.kind) {
      case Token::Number:
        return number(token);
      case Token::Letter:
        return variable(token.text);
      case Token::Symbol:
        if (token.text == "(") return finish_group(")");
        if (token.text == "[") return finish_group("]");
        if (token.text == "{") return finish_group("}");
        if (token.text == "|") return make(Op::Function, {finish_group("|")}, "abs");
        throw ParseFailure{};
      case Token::Command:
        return command(token.text);
      default:
        throw ParseFailure{};
    }
  }

  Expr finish_group(std::string_view close) {
    Expr inner = parse_sum();
    expect(Token::Symbol, close);
    return inner;
  }

  // A plain integer, or a mixed number: 1\frac{4}{5} is 9/5 by the MATH dataset's convention.
  Expr number(const Token& token) {
    if (peek().is(Token::Symbol, "_")) throw ParseFailure{};  // 52_8: a base-8 numeral, compared as text
    Value value = to_double(token.text);
    bool integer = token.text.find('.') == std::string::npos;
    if (integer && peek().is(Token::Command, "\\frac") && peek(1).is(Token::Symbol, "{") &&
        peek(2).kind == Token::Number && peek(3).is(Token::Symbol, "}") && peek(4).is(Token::Symbol, "{") &&
        peek(5).kind == Token::Number && peek(6).is(Token::Symbol, "}")) {
      double numerator = to_double(peek(2).text), denominator = to_double(peek(5).text);
      if (numerator < denominator) {
        pos_ += 7;
        return constant(value + numerator / denominator);
      }
    }
    return constant(value);
  }

  static Expr letter_value(const std::string& letter) {
    if (letter == "i") return constant(Value(0, 1));
    if (letter == "e") return constant(kE);
    return make(Op::Variable, {}, letter);
  }

  // x, x_1, a_{n}, with i the imaginary unit and e Euler's number (as math_verify reads them).
  Expr variable(std::string name) {
    if (!accept_symbol("_")) return letter_value(name);
    name += "_";
    if (accept_symbol("{")) {
      while (!peek().is(Token::Symbol, "}")) {
        if (peek().kind == Token::End) throw ParseFailure{};
        name += next().text;
      }
      ++pos_;
    } else {
      name += next().text;
    }
    return make(Op::Variable, {}, name);
  }

  Expr command(const std::string& command) {
    std::string name = command.substr(1);
    if (name == "frac") {
      Expr numerator = parse_argument();
      return make(Op::Divide, {numerator, parse_argument()});
    }
    if (name == "binom") {
      Expr n = parse_argument();
      return make(Op::Function, {n, parse_argument()}, "binom");
    }
    if (name == "sqrt") {
      Expr degree = constant(2.0);
      if (accept_symbol("[")) degree = finish_group("]");
      return make(Op::Root, {degree, parse_argument()});
    }
    if (name == "pi") return constant(kPi);
    if (name == "infty") return constant(HUGE_VAL);
    if (name == "lfloor" || name == "lceil") return rounding(name);
    if (greek_letters().count(name)) return make(Op::Variable, {}, command);
    if (function_names().count(name)) return function(name);
    throw ParseFailure{};
  }

  Expr rounding(const std::string& name) {
    Expr inner = parse_sum();
    expect(Token::Command, name == "lfloor" ? "\\rfloor" : "\\rceil");
    return make(Op::Function, {inner}, name == "lfloor" ? "floor" : "ceil");
  }

  // \sin x, \sin(x), \sin^2 x (the square of sin x), \log_2 8.
  Expr function(const std::string& name) {
    std::optional<Expr> base;
    if (name == "log" && accept_symbol("_")) base = parse_argument();
    std::optional<Expr> power;
    if (accept_symbol("^")) power = parse_exponent();
    Expr argument = peek().is(Token::Symbol, "(") ? parse_group("(", ")") : parse_power();
    Expr result = base ? make(Op::Function, {argument, *base}, "log") : make(Op::Function, {argument}, name);
    return power ? make(Op::Power, {result, *power}) : result;
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

bool is_real(Value v) { return v.imag() == 0.0; }
bool is_integer(double x) { return std::isfinite(x) && std::floor(x) == x; }

Value power(Value base, Value exponent) {
  if (is_real(base) && is_real(exponent) && (base.real() >= 0 || is_integer(exponent.real())))
    return std::pow(base.real(), exponent.real());
  return std::pow(base, exponent);
}

// The real root for odd degrees of negative numbers (\sqrt[3]{-8} = -2), else the principal root.
Value root(Value degree, Value radicand) {
  if (degree == Value(2.0)) return std::sqrt(radicand);
  if (is_real(degree) && is_real(radicand) && radicand.real() < 0 && is_integer(degree.real()) &&
      static_cast<long long>(degree.real()) % 2 != 0)
    return -std::pow(-radicand.real(), 1.0 / degree.real());
  return power(radicand, 1.0 / degree);
}

Value factorial(Value n) {
  if (!is_real(n) || !is_integer(n.real()) || n.real() < 0 || n.real() > 170) return NAN;
  return std::tgamma(n.real() + 1);
}

Value real_only(Value v, double (*f)(double)) { return is_real(v) ? Value(f(v.real())) : Value(NAN); }

Value apply_function(const std::string& name, const std::vector<Value>& a) {
  if (name == "sin") return std::sin(a[0]);
  if (name == "cos") return std::cos(a[0]);
  if (name == "tan") return std::tan(a[0]);
  if (name == "cot") return 1.0 / std::tan(a[0]);
  if (name == "sec") return 1.0 / std::cos(a[0]);
  if (name == "csc") return 1.0 / std::sin(a[0]);
  if (name == "arcsin") return std::asin(a[0]);
  if (name == "arccos") return std::acos(a[0]);
  if (name == "arctan") return std::atan(a[0]);
  if (name == "sinh") return std::sinh(a[0]);
  if (name == "cosh") return std::cosh(a[0]);
  if (name == "tanh") return std::tanh(a[0]);
  if (name == "exp") return std::exp(a[0]);
  if (name == "ln") return std::log(a[0]);
  if (name == "log") return a.size() == 2 ? std::log(a[0]) / std::log(a[1]) : std::log(a[0]);
  if (name == "abs") return std::abs(a[0]);
  if (name == "floor") return real_only(a[0], std::floor);
  if (name == "ceil") return real_only(a[0], std::ceil);
  if (name == "binom") return factorial(a[0]) / (factorial(a[1]) * factorial(a[0] - a[1]));
  return NAN;
}

}  // namespace

std::optional<Expr> parse_expression(std::string_view latex) {
  try {
    return Parser(tokenize(latex)).parse_all();
  } catch (const ParseFailure&) {
    return std::nullopt;
  }
}

Value evaluate(const Expr& expr, const Assignment& variables) {
  const auto& a = expr->args;
  auto arg = [&](std::size_t i) { return evaluate(a[i], variables); };
  switch (expr->op) {
    case Op::Constant:
      return expr->value;
    case Op::Variable: {
      auto found = variables.find(expr->name);
      return found == variables.end() ? Value(NAN) : found->second;
    }
    case Op::Negate:
      return -arg(0);
    case Op::Add:
      return arg(0) + arg(1);
    case Op::Subtract:
      return arg(0) - arg(1);
    case Op::Multiply:
      return arg(0) * arg(1);
    case Op::Divide:
      return arg(0) / arg(1);
    case Op::Power:
      return power(arg(0), arg(1));
    case Op::Root:
      return root(arg(0), arg(1));
    case Op::Factorial:
      return factorial(arg(0));
    case Op::Function: {
      std::vector<Value> values;
      for (std::size_t i = 0; i < a.size(); ++i) values.push_back(arg(i));
      return apply_function(expr->name, values);
    }
  }
  return NAN;
}

void collect_variables(const Expr& expr, std::vector<std::string>& names) {
  if (expr->op == Op::Variable && std::find(names.begin(), names.end(), expr->name) == names.end())
    names.push_back(expr->name);
  for (const Expr& child : expr->args) collect_variables(child, names);
}

}  // namespace kvbench::graders::math_detail
