// Math answer extraction and equivalence (MATH500, AIME, HMMT). Aims to agree with math_verify.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kvbench::graders {

// Content of the last \boxed{...} (or \fbox{...}) with braces matched; nullopt if none is complete.
std::optional<std::string> last_boxed(std::string_view text);
// True once text holds a complete \boxed{...} (the MATH500 stop condition).
bool has_complete_boxed(std::string_view text);
// Last \boxed{} content, else the "the answer is ..." fallback; nullopt = pred=None.
std::optional<std::string> extract_math_answer(std::string_view text);
// Canonical string form: \left/\right, \dfrac/\tfrac, spaces, \!, $, \text{units}, ^\circ, \%, trailing .0, x= ...
std::string normalize_math_answer(std::string_view latex);
// String equality after normalisation, then structural (tuples, intervals, sets, matrices), then numeric.
bool math_equal(std::string_view prediction, std::string_view gold);
// AIME: integer exact match (leading zeros ignored); false if either side is not an integer.
bool integer_equal(std::string_view prediction, std::string_view gold);

}  // namespace kvbench::graders
