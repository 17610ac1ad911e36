// Finding the answer in a model's output: the last \boxed{...}, else "the answer is ...".
#include <cctype>
#include <vector>

#include "tasks/graders/math.h"
#include "tasks/graders/math_internal.h"

namespace kvbench::graders {

using namespace math_detail;

namespace {

constexpr std::string_view kBoxCommands[] = {"\\boxed", "\\fbox"};

std::string trim(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

// The '}' closing each '{' (npos when unclosed), found in one pass with a stack, by the same rules as
// matching_brace: calling that once per box is quadratic on the thousands of unclosed "\boxed{" that a
// degenerate generation repeats.
std::vector<std::size_t> closing_braces(std::string_view text) {
  std::vector<std::size_t> closing(text.size(), std::string_view::npos), open;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;  // escaped character (or the second half of \\) is text
    } else if (text[i] == '{') {
      open.push_back(i);
    } else if (text[i] == '}' && !open.empty()) {
      closing[open.back()] = i;
      open.pop_back();
    }
  }
  return closing;
}

// Content of the box whose command ends at `after`: "{...}" with matched braces, or "\boxed 5" up to
// the next space or '$'. nullopt while incomplete; unless the text is `final`, a braceless answer
// running to the end of the text is incomplete too (the generation may still extend it).
std::optional<std::string_view> box_content(std::string_view text, const std::vector<std::size_t>& closing,
                                            std::size_t after, bool final) {
  if (after < text.size() && text[after] == '{') {
    const std::size_t close = closing[after];
    if (close == std::string_view::npos) return std::nullopt;
    return text.substr(after + 1, close - after - 1);
  }
  if (after >= text.size() || text[after] != ' ') return std::nullopt;  // "\boxeds" is another word
  std::size_t begin = text.find_first_not_of(' ', after);
  if (begin == std::string_view::npos) return std::nullopt;
  std::size_t end = text.find_first_of(" \n$", begin);
  if (end == std::string_view::npos && !final) return std::nullopt;
  return text.substr(begin, end - begin);
}

struct Box {
  std::size_t position;
  std::string_view content;  // a view: nested boxes would otherwise copy the text once per level
};

std::optional<Box> last_complete_box(std::string_view text, bool final) {
  const std::vector<std::size_t> closing = closing_braces(text);
  std::optional<Box> last;
  for (std::string_view command : kBoxCommands) {
    for (std::size_t at = text.find(command); at != std::string_view::npos; at = text.find(command, at + 1)) {
      if (last && at < last->position) continue;
      if (auto content = box_content(text, closing, at + command.size(), final)) last = Box{at, *content};
    }
  }
  return last;
}

// The phrase's answer: a $...$ / \(...\) math span if one follows, else the rest of the sentence.
std::string answer_after_phrase(std::string_view rest) {
  std::string text = trim(rest);
  if (!text.empty() && text[0] == ':') text = trim(std::string_view(text).substr(1));
  for (auto [open, close] : {std::pair{"$$", "$$"}, {"$", "$"}, {"\\(", "\\)"}, {"\\[", "\\]"}}) {
    std::string_view opener(open);
    if (text.compare(0, opener.size(), opener) != 0) continue;
    std::size_t end = text.find(close, opener.size());
    while (end != std::string::npos && text[end - 1] == '\\' && close[0] == '$')  // "\$18.90" is a dollar sign
      end = text.find(close, end + 1);
    if (end != std::string::npos) return trim(std::string_view(text).substr(opener.size(), end - opener.size()));
  }
  std::size_t end = text.find('\n');
  std::string_view line = std::string_view(text).substr(0, end);
  // A sentence ends at ". " (a decimal point is followed by a digit, not a space).
  std::size_t stop = line.find(". ");
  line = line.substr(0, stop);
  std::string answer = trim(line);
  while (!answer.empty() && answer.back() == '.') answer.pop_back();
  return answer;
}

std::optional<std::string> answer_phrase(std::string_view text) {
  static const Regex phrase(R"((?i)(?:final answer|the answer) is)");
  auto matches = phrase.find_all(text);
  if (matches.empty()) return std::nullopt;
  std::string answer = answer_after_phrase(text.substr(matches.back().second));
  if (answer.empty()) return std::nullopt;
  return answer;
}

}  // namespace

std::optional<std::string> last_boxed(std::string_view text) {
  auto box = last_complete_box(text, /*final=*/true);
  if (!box) return std::nullopt;
  return trim(box->content);
}

bool has_complete_boxed(std::string_view text) { return last_complete_box(text, /*final=*/false).has_value(); }

namespace {

// Text whose every backslash is doubled ("\\boxed{\\frac{1}{2}}": an output JSON-escaped once more than it
// should be) with single ones; nullopt for ordinary LaTeX, where a command has a single backslash.
std::optional<std::string> undo_json_escaping(std::string_view text) {
  bool doubled_command = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') continue;
    std::size_t run = text.find_first_not_of('\\', i);
    if (run == std::string_view::npos) run = text.size();
    if ((run - i) % 2 != 0) return std::nullopt;
    doubled_command = doubled_command || (run < text.size() && std::isalpha(static_cast<unsigned char>(text[run])));
    i = run - 1;
  }
  if (!doubled_command) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\\') ++i;  // keep one of each pair
  }
  return out;
}

}  // namespace

std::optional<std::string> extract_math_answer(std::string_view text) {
  if (auto unescaped = undo_json_escaping(text)) return extract_math_answer(*unescaped);
  if (auto boxed = last_boxed(text)) return boxed;
  return answer_phrase(text);
}

}  // namespace kvbench::graders
