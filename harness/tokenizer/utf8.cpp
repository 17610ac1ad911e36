#include "tokenizer/utf8.h"

#include "common/error.h"

namespace kvbench::utf8 {

namespace {

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

DecodedChar decode(std::string_view text, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) return {lead, 1};
  std::size_t length = 0;
  char32_t code_point = 0;
  char32_t minimum = 0;  // shortest form check: overlong encodings are invalid
  if ((lead & 0xE0) == 0xC0) {
    length = 2, code_point = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code_point = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code_point = lead & 0x07, minimum = 0x10000;
  } else {
    return {0, 0};
  }
  if (pos + length > text.size()) return {0, 0};
  for (std::size_t i = 1; i < length; ++i) {
    const auto byte = static_cast<unsigned char>(text[pos + i]);
    if (!is_continuation(byte)) return {0, 0};
    code_point = (code_point << 6) | (byte & 0x3F);
  }
  const bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
  if (code_point < minimum || code_point > 0x10FFFF || surrogate) return {0, 0};
  return {code_point, length};
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

void require_valid(std::string_view text, std::string_view what) {
  for (std::size_t pos = 0; pos < text.size();) {
    const auto decoded = decode(text, pos);
    if (decoded.length == 0) fail("{}: invalid UTF-8 at byte {}", what, pos);
    pos += decoded.length;
  }
}

// Bytes of an invalid sequence that start a well-formed one (Unicode's "maximal subpart"), at least 1.
static std::size_t maximal_subpart(std::string_view bytes, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(bytes[pos]);
  std::size_t expected = 0;
  unsigned char second_low = 0x80, second_high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) expected = 2;
  else if (lead >= 0xE0 && lead <= 0xEF) expected = 3;
  else if (lead >= 0xF0 && lead <= 0xF4) expected = 4;
  else return 1;
  if (lead == 0xE0) second_low = 0xA0;
  if (lead == 0xED) second_high = 0x9F;
  if (lead == 0xF0) second_low = 0x90;
  if (lead == 0xF4) second_high = 0x8F;
  std::size_t length = 1;
  while (length < expected && pos + length < bytes.size()) {
    const auto byte = static_cast<unsigned char>(bytes[pos + length]);
    const bool ok = length == 1 ? (byte >= second_low && byte <= second_high) : is_continuation(byte);
    if (!ok) break;
    ++length;
  }
  return length;
}

std::string repair(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t pos = 0; pos < bytes.size();) {
    const auto decoded = decode(bytes, pos);
    if (decoded.length > 0) {
      out.append(bytes.substr(pos, decoded.length));
      pos += decoded.length;
    } else {
      append(out, 0xFFFD);
      pos += maximal_subpart(bytes, pos);
    }
  }
  return out;
}

}  // namespace kvbench::utf8
