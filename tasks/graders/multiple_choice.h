// Multiple-choice letter extraction (LongHealth A–E, GPQA A–D).
#pragma once
#include <optional>
#include <string_view>

namespace kvbench::graders {

// The reference's LongHealth rule: the first character of the output that is one of `letters`
// (e.g. "ABCDE"), wherever it stands — so "Based on ..." yields B. Reproduced as is; nullopt if none.
std::optional<char> first_letter(std::string_view text, std::string_view letters);

// Reasoning-model answers (GPQA): the last "Answer: X" (case-insensitive "answer", optional markdown,
// $, parentheses, \text{}), else the last \boxed{X}, else the last standalone capital letter
// (not part of a word or a LaTeX command). Letters are capitals from `letters`; nullopt if none.
std::optional<char> extract_choice_letter(std::string_view text, std::string_view letters);

}  // namespace kvbench::graders
