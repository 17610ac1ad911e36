#define PCRE2_CODE_UNIT_WIDTH 8
#include "tasks/graders/multiple_choice.h"

#include <pcre2.h>

#include <memory>
#include <string>

#include "common/error.h"

namespace kvbench::graders {

namespace {

// A compiled PCRE2 pattern whose one capture group is the letter.
class LetterPattern {
 public:
  explicit LetterPattern(const std::string& pattern) {
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    code_.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()), pattern.size(), PCRE2_UTF,
                              &error_code, &error_offset, nullptr));
    if (!code_) fail("internal: bad letter pattern at offset {}: {}", error_offset, pattern);
  }

  // The capture of the last non-overlapping match, or nullopt.
  std::optional<char> last_capture(std::string_view text) const {
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
        pcre2_match_data_create_from_pattern(code_.get(), nullptr), &pcre2_match_data_free);
    std::optional<char> last;
    PCRE2_SIZE offset = 0;
    while (offset <= text.size()) {
      // UTF-8 is validated by the first call only: checking the whole text at every match is quadratic.
      int rc = pcre2_match(code_.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), offset,
                           offset == 0 ? 0 : PCRE2_NO_UTF_CHECK, match.get(), nullptr);
      if (rc < 2) break;  // no match (or no capture)
      const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
      last = text[ovector[2]];
      offset = ovector[1] > ovector[0] ? ovector[1] : ovector[0] + 1;
    }
    return last;
  }

 private:
  std::unique_ptr<pcre2_code, decltype(&pcre2_code_free)> code_{nullptr, &pcre2_code_free};
};

}  // namespace

std::optional<char> first_letter(std::string_view text, std::string_view letters) {
  auto pos = text.find_first_of(letters);
  if (pos == std::string_view::npos) return std::nullopt;
  return text[pos];
}

std::optional<char> extract_choice_letter(std::string_view text, std::string_view letters) {
  const std::string letter = "([" + std::string(letters) + "])(?![A-Za-z0-9])";
  // Wrappers a model may put around the letter: markdown bold, $, parentheses, \text{...}.
  const std::string wrappers = R"([\s*$(\[]*(?:\\text(?:bf)?\{|\\mathrm\{|\\boxed\{)?[\s(]*)";
  const LetterPattern answer_line("(?i:answer)[ \\t*]*:" + wrappers + letter);
  const LetterPattern boxed(R"(\\boxed\{[\s(]*(?:\\text(?:bf)?\{|\\mathrm\{)?\s*)" + letter);
  const LetterPattern standalone(R"((?<![A-Za-z0-9\\]))" + letter);
  for (const LetterPattern* pattern : {&answer_line, &boxed, &standalone}) {
    if (auto found = pattern->last_capture(text)) return found;
  }
  return std::nullopt;
}

}  // namespace kvbench::graders
