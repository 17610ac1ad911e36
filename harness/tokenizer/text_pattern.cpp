#include "tokenizer/text_pattern.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cctype>

#include "common/error.h"
#include "tokenizer/utf8.h"

namespace kvbench {

using tokenizer_json::Node;

struct TextPattern::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

TextPattern::TextPattern(const std::string& pattern, const Node& where) : code_(std::make_unique<Code>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP,
                              &error, &offset, nullptr);
  if (!code_->code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    where.fail_here(fmt::format("invalid regex at offset {}: {}", offset, reinterpret_cast<char*>(message)));
  }
  pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE);  // without JIT support pcre2_match interprets
}

TextPattern::~TextPattern() = default;

std::shared_ptr<const TextPattern> TextPattern::from_json(const Node& pattern) {
  if (pattern.has("String")) return std::make_shared<TextPattern>(escape(pattern.at("String").string()), pattern);
  if (pattern.has("Regex")) return std::make_shared<TextPattern>(pattern.at("Regex").string(), pattern);
  pattern.fail_here("expected {\"String\": ...} or {\"Regex\": ...}");
}

// ASCII punctuation escaped with a backslash (always a literal in PCRE2); every other character stands
// for itself. (\Q...\E would break on a literal "\E".)
std::string TextPattern::escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80 && !std::isalnum(byte) && byte != ' ') out += '\\';
    out += c;
  }
  return out;
}

std::vector<TextSpan> TextPattern::spans(std::string_view text) const {
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(code_->code, nullptr), &pcre2_match_data_free);
  std::vector<TextSpan> out;
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t done = 0;        // end of the last span emitted
  std::size_t search = 0;      // where the next search starts
  bool matched_before = false; // whether a match ended at `done`
  while (search <= text.size()) {
    const int rc = pcre2_match(code_->code, subject, text.size(), search, PCRE2_NO_UTF_CHECK, data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) fail("tokenizer: regex failed with PCRE2 error {}", rc);
    const PCRE2_SIZE* range = pcre2_get_ovector_pointer(data.get());
    const std::size_t start = range[0], end = range[1];
    if (start == end && matched_before && end == done) {  // no second empty match at the same place
      if (search == text.size()) break;
      search += std::max<std::size_t>(1, utf8::decode(text, search).length);
      continue;
    }
    if (start > done) out.push_back({done, start, false});
    out.push_back({start, end, true});
    done = search = end;
    matched_before = true;
  }
  if (done < text.size()) out.push_back({done, text.size(), false});
  return out;
}

std::string TextPattern::replace(std::string_view text, const std::vector<TextSpan>& spans, std::string_view content) {
  std::string out;
  out.reserve(text.size());
  for (const auto& span : spans) {
    if (span.is_match) {
      out.append(content);
    } else {
      out.append(text.substr(span.start, span.end - span.start));
    }
  }
  return out;
}

SplitBehavior split_behavior(const Node& behavior) {
  const std::string name = behavior.string();
  if (name == "Removed") return SplitBehavior::Removed;
  if (name == "Isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous") return SplitBehavior::Contiguous;
  behavior.fail_here(fmt::format("unsupported behavior \"{}\"", name));
}

namespace {

// HF's fold for MergedWithPrevious (and, on reversed spans, MergedWithNext): a match directly after a
// non-match joins it.
std::vector<TextSpan> merge_matches_into_neighbour(const std::vector<TextSpan>& spans, bool with_next) {
  std::vector<TextSpan> out;
  bool previous_match = false;
  const auto visit = [&](TextSpan span) {
    if (span.is_match && !previous_match && !out.empty()) {
      if (with_next) {
        out.back().start = span.start;
      } else {
        out.back().end = span.end;
      }
    } else {
      out.push_back({span.start, span.end, false});
    }
    previous_match = span.is_match;
  };
  if (with_next) {
    std::for_each(spans.rbegin(), spans.rend(), visit);
    std::reverse(out.begin(), out.end());
  } else {
    std::for_each(spans.begin(), spans.end(), visit);
  }
  return out;
}

}  // namespace

std::vector<TextSpan> apply_split_behavior(std::vector<TextSpan> spans, SplitBehavior behavior) {
  switch (behavior) {
    case SplitBehavior::Removed:
      spans.erase(std::remove_if(spans.begin(), spans.end(), [](const TextSpan& s) { return s.is_match; }),
                  spans.end());
      return spans;
    case SplitBehavior::Isolated: return spans;
    case SplitBehavior::MergedWithPrevious: return merge_matches_into_neighbour(spans, false);
    case SplitBehavior::MergedWithNext: return merge_matches_into_neighbour(spans, true);
    case SplitBehavior::Contiguous: {  // runs of matches, and runs of non-matches, become one piece each
      std::vector<TextSpan> out;
      bool previous_match = false;
      for (const auto& span : spans) {
        if (span.is_match == previous_match && !out.empty()) {
          out.back().end = span.end;
        } else {
          out.push_back(span);
        }
        previous_match = span.is_match;
      }
      return out;
    }
  }
  return spans;
}

}  // namespace kvbench
