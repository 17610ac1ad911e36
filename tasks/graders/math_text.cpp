// Text utilities for the math grader: PCRE2 patterns and bracket matching.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/error.h"
#include "tasks/graders/math_internal.h"

namespace kvbench::graders::math_detail {

namespace {

struct MatchData {
  explicit MatchData(const pcre2_code* code) : data(pcre2_match_data_create_from_pattern(code, nullptr)) {}
  ~MatchData() { pcre2_match_data_free(data); }
  pcre2_match_data* data;
};

PCRE2_SPTR as_pcre(std::string_view text) { return reinterpret_cast<PCRE2_SPTR>(text.data()); }

bool is_open(char c) { return c == '(' || c == '[' || c == '{'; }
bool is_close(char c) { return c == ')' || c == ']' || c == '}'; }

}  // namespace

Regex::Regex(std::string_view pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_ = pcre2_compile(as_pcre(pattern), pattern.size(), PCRE2_UTF, &error, &offset, nullptr);
  if (!code_) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    fail("math grader: bad pattern \"{}\" at {}: {}", pattern, offset, reinterpret_cast<char*>(message));
  }
}

Regex::~Regex() { pcre2_code_free(code_); }

std::string Regex::replace_all(std::string_view text, std::string_view replacement) const {
  std::string out(text.size() * 2 + 64, '\0');
  for (int attempt = 0; attempt < 2; ++attempt) {
    PCRE2_SIZE length = out.size();
    constexpr uint32_t options =
        PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH | PCRE2_SUBSTITUTE_UNSET_EMPTY;
    int rc = pcre2_substitute(code_, as_pcre(text), text.size(), 0, options, nullptr, nullptr, as_pcre(replacement),
                              replacement.size(), reinterpret_cast<PCRE2_UCHAR*>(out.data()), &length);
    if (rc >= 0) {
      out.resize(length);
      return out;
    }
    // Invalid UTF-8 (or a match limit) leaves the text as written, to be compared as plain text: graders
    // are total, and find_all/search likewise treat such a text as matching nothing.
    if (rc != PCRE2_ERROR_NOMEMORY) return std::string(text);
    out.assign(length + 1, '\0');  // OVERFLOW_LENGTH reported the size needed
  }
  fail("math grader: substitution output did not fit");
}

bool Regex::search(std::string_view text) const {
  MatchData match(code_);
  return pcre2_match(code_, as_pcre(text), text.size(), 0, 0, match.data, nullptr) >= 0;
}

std::vector<std::pair<std::size_t, std::size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  MatchData match(code_);
  std::size_t start = 0;
  // PCRE2 validates the whole subject's UTF-8 on every call unless told not to: once is enough (the
  // first call fails on invalid input), or a text with many matches costs quadratic time.
  while (start <= text.size() && pcre2_match(code_, as_pcre(text), text.size(), start,
                                             start == 0 ? 0 : PCRE2_NO_UTF_CHECK, match.data, nullptr) >= 0) {
    PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.data);
    spans.emplace_back(ovector[0], ovector[1]);
    start = ovector[1] > ovector[0] ? ovector[1] : ovector[1] + 1;
  }
  return spans;
}

std::size_t matching_brace(std::string_view text, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;  // escaped character (or the second half of \\) is text
    } else if (text[i] == '{') {
      ++depth;
    } else if (text[i] == '}' && --depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

std::size_t matching_bracket(std::string_view text, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (is_open(text[i])) ++depth;
    if (is_close(text[i]) && --depth == 0) return i;
  }
  return std::string_view::npos;
}

std::vector<std::string> split_top_level(std::string_view text, std::string_view separator) {
  std::vector<std::string> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_open(text[i])) ++depth;
    if (is_close(text[i])) --depth;
    if (depth == 0 && text.compare(i, separator.size(), separator) == 0) {
      parts.emplace_back(text.substr(start, i - start));
      start = i + separator.size();
      i = start - 1;
    }
  }
  parts.emplace_back(text.substr(start));
  return parts;
}

}  // namespace kvbench::graders::math_detail
