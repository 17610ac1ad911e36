// UTF-8 helpers shared by the tokenizer stages.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace kvbench::utf8 {

struct DecodedChar {
  char32_t code_point;
  std::size_t length;  // bytes consumed; 0 when the bytes at `pos` are not valid UTF-8
};

DecodedChar decode(std::string_view text, std::size_t pos);
void append(std::string& out, char32_t code_point);

// Throws kvbench::Error naming `what` and the byte offset of the first invalid sequence.
void require_valid(std::string_view text, std::string_view what);

// Replaces every invalid sequence by U+FFFD (as Rust's String::from_utf8_lossy does when HF decodes bytes).
std::string repair(std::string_view bytes);

}  // namespace kvbench::utf8
