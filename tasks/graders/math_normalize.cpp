// Canonical string form of a LaTeX answer (Qwen2.5-Math grader.py / MATH `strip_string` conventions).
#include <cctype>

#include "tasks/graders/math.h"
#include "tasks/graders/math_internal.h"

namespace kvbench::graders {

using namespace math_detail;

namespace {

bool is_letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string trim(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  return std::string(text.substr(begin, end - begin));
}

std::string replace_literal(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// Unicode forms models emit, mapped to their LaTeX commands.
std::string ascii_math(std::string text) {
  for (auto [from, to] : {std::pair{"\u2212", "-"}, {"\u00d7", "\\times "}, {"\u00b7", "\\cdot "},
                          {"\u03c0", "\\pi "}, {"\u221e", "\\infty "}, {"\u221a", "\\sqrt "}, {"\u00b0", ""}})
    text = replace_literal(std::move(text), from, to);
  return text;
}

// Typesetting with no mathematical content: dollars, sizing, thin spaces, degrees, percent.
std::string drop_typesetting(std::string_view text) {
  static const Regex dollars(R"(\\?\$)");
  static const Regex sizing(R"(\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big)(?![a-zA-Z])\.?|\\displaystyle)");
  // (\\\\) keeps a LaTeX line break so "\\ 2" is not read as "\" + "\ ".
  static const Regex spacing(R"((\\\\)|\\[!,;: ]|\\q?quad(?![a-zA-Z])|~)");
  static const Regex degrees(R"(\^\s*\{?\s*\\circ\s*\}?|\\circ(?![a-zA-Z])|\\degree(?![a-zA-Z]))");
  static const Regex percent(R"(\\?%)");
  static const Regex frac_variants(R"(\\[dtc]frac(?![a-zA-Z]))");
  std::string out = dollars.replace_all(text, "");
  out = sizing.replace_all(out, "");
  out = spacing.replace_all(out, "$1");
  out = degrees.replace_all(out, "");
  out = percent.replace_all(out, "");
  out = frac_variants.replace_all(out, "\\frac");
  return replace_literal(std::move(out), "{,}", ",");
}

// \text{...}-like groups: the whole answer keeps its content (\text{(C)}, \text{Evelyn}); a trailing
// text group after other content is a unit and goes, with its power (15\mbox{ cm}^2); any other group
// is unwrapped (\mathbf{a} is a vector, never a unit).
std::string resolve_text_groups(std::string text) {
  static const Regex command(R"(\\(?:text|textbf|textit|textnormal|textrm|mbox|mathrm|mathbf|mathit)\s*\{)");
  static const Regex symbol_style(R"(^\\math(?:bf|it))");
  static const Regex unit_power(R"(^\s*\^\s*(?:\{\s*\d\s*\}|\d)\s*$)");
  for (auto spans = command.find_all(text); !spans.empty(); spans = command.find_all(text)) {
    auto [start, brace] = spans.front();
    std::size_t open = brace - 1;
    std::size_t close = matching_brace(text, open);
    if (close == std::string::npos) break;
    std::string content = text.substr(open + 1, close - open - 1);
    std::string before = trim(std::string_view(text).substr(0, start));
    std::string_view after = std::string_view(text).substr(close + 1);
    bool is_unit = !before.empty() && (trim(after).empty() || unit_power.search(after)) &&
                   !symbol_style.search(std::string_view(text).substr(start));
    if (is_unit) {
      text = before;
    } else {
      text = text.substr(0, start) + content + std::string(after);
    }
  }
  return text;
}

// Plain-word units after a number ("125 miles", "4 square units"); needs the space, since "2m" is algebra.
std::string drop_plain_units(std::string_view text) {
  static const Regex unit(
      R"((?<=[\d}])\s+(?:sq(?:uare)?\s+|cubic\s+)?(?:units?|degrees?|cm|mm|km|m|meters?|inch(?:es)?|)"
      R"(feet|foot|ft|miles?|cents?|dollars?|hours?|minutes?|seconds?|days?|weeks?|years?|pounds?|mph|)"
      R"(percent)(?:\^\{?[23]\}?)?\.?\s*$)");
  return unit.replace_all(text, "");
}

// Removes whitespace except where it ends a command name before a letter ("\pi r" is not "\pir").
std::string drop_spaces(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_space(text[i])) {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && is_space(text[i + 1])) ++i;
    bool next_is_letter = i + 1 < text.size() && is_letter(text[i + 1]);
    std::size_t name_start = out.size();
    while (name_start > 0 && is_letter(out[name_start - 1])) --name_start;
    bool ends_command = name_start < out.size() && name_start > 0 && out[name_start - 1] == '\\';
    if (next_is_letter && ends_command) out += ' ';
  }
  return out;
}

// Arguments LaTeX lets go without braces: \frac12, \frac{270}7, \sqrt2, \sqrt x.
std::string brace_arguments(std::string_view text) {
  static const Regex frac_two_digits(R"(\\frac(\d)(\d))");
  static const Regex frac_digit_first(R"(\\frac(\d)\{)");
  static const Regex frac_digit_second(R"(\\frac\{([^{}]*)\}(\d))");
  static const Regex sqrt_bare(R"(\\sqrt ?(\d+|[a-zA-Z](?![a-zA-Z])))");
  static const Regex single_subscript(R"(_\{(\w)\})");
  std::string out = frac_two_digits.replace_all(text, "\\frac{$1}{$2}");
  out = frac_digit_first.replace_all(out, "\\frac{$1}{");
  out = frac_digit_second.replace_all(out, "\\frac{$1}{$2}");
  out = sqrt_bare.replace_all(out, "\\sqrt{$1}");
  return single_subscript.replace_all(out, "_$1");
}

// "x = 2+3 = 5" keeps its first and last sides; "\frac13 \approx 0.33" keeps the exact value (as
// math_verify reads a chain of steps).
std::string settle_chains(const std::string& text) {
  std::string exact = split_top_level(text, "\\approx").front();
  auto sides = split_top_level(exact, "=");
  if (sides.size() <= 2) return exact;
  return sides.front() + "=" + sides.back();
}

std::string strip_enclosing_braces(std::string text) {
  while (text.size() >= 2 && text.front() == '{' && matching_brace(text, 0) == text.size() - 1)
    text = text.substr(1, text.size() - 2);
  return text;
}

// Number spellings: ".5" → "0.5", "1,000" → "1000", "2.50" → "2.5", "5.0" → "5", "+\infty" → "\infty".
std::string canonical_numbers(std::string_view text) {
  static const Regex leading_point(R"((^|[^\d])\.(\d))");
  static const Regex thousands(R"(^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$)");
  static const Regex zero_fraction(R"((\d)\.0+(?!\d))");
  static const Regex trailing_zeros(R"((\.\d*?[1-9])0+(?!\d))");
  static const Regex plus_infinity(R"((^|[,(\[])\+\\infty)");
  std::string out = leading_point.replace_all(text, "${1}0.$2");
  if (thousands.search(out)) out = replace_literal(out, ",", "");
  out = zero_fraction.replace_all(out, "$1");
  out = trailing_zeros.replace_all(out, "$1");
  return plus_infinity.replace_all(out, "$1\\infty");
}

std::string unwrap_whole_box(std::string text) {
  for (std::string_view command : {"\\boxed", "\\fbox"}) {
    if (text.compare(0, command.size(), command) != 0) continue;
    std::size_t open = text.find_first_not_of(' ', command.size());
    if (open < text.size() && text[open] == '{' && matching_brace(text, open) == text.size() - 1)
      return trim(std::string_view(text).substr(open + 1, text.size() - open - 2));
  }
  return text;
}

}  // namespace

namespace math_detail {

std::string clean_math_answer(std::string_view latex) {
  static const Regex choice_letter(R"(^\(([A-Za-z])\)$)");
  // Answers joined by "and" are a list: "-2 \text{ and } 1", "3 and 5" (as math_verify reads them).
  static const Regex text_and(R"(\\(?:text|mbox|textrm|mathrm)\s*\{\s*and\s*\})");
  static const Regex plain_and(R"((?<=[\d})])\s+and\s+(?=[-\d\\(\[{]))");
  std::string text = unwrap_whole_box(trim(ascii_math(std::string(latex))));
  // (A marker until the numbers are canonical, so "58 and 500" does not read as 58,500.)
  text = plain_and.replace_all(text_and.replace_all(text, "\x01"), "\x01");
  text = drop_typesetting(text);
  text = drop_plain_units(trim(resolve_text_groups(text)));
  text = brace_arguments(drop_spaces(text));
  text = settle_chains(strip_enclosing_braces(text));
  while (!text.empty() && (text.back() == '.' || text.back() == ',')) text.pop_back();
  text = replace_literal(canonical_numbers(text), "\x01", ",");
  return choice_letter.replace_all(text, "$1");
}

std::string strip_variable_prefix(std::string_view answer) {
  // A named variable or function ("x =", "f(x) =", "x \in"), or a labelled tuple ("(p,q) =").
  static const Regex prefix(
      R"(^(?:(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\{?\w+\}?)?(?:\([a-zA-Z]\))?(?:=|\\in(?![a-zA-Z]))|)"
      R"(\((?:[a-zA-Z](?:_\{?\w+\}?)?,)+[a-zA-Z](?:_\{?\w+\}?)?\)=))");
  auto spans = prefix.find_all(answer);
  if (spans.empty()) return std::string(answer);
  std::string_view rest = answer.substr(spans.front().second);
  if (rest.find('=') != std::string_view::npos || rest.empty()) return std::string(answer);
  return std::string(rest);
}

}  // namespace math_detail

std::string normalize_math_answer(std::string_view latex) {
  return strip_variable_prefix(clean_math_answer(latex));
}

}  // namespace kvbench::graders
