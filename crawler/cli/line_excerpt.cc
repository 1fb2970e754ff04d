#include "crawler/cli/line_excerpt.h"

#include <cstdint>

namespace urlsieve::cli {
namespace {

// The length of the well-formed UTF-8 sequence at the start of `s` (Unicode 15 §3.9, Table 3-7),
// or 0 if there is none.
size_t Utf8SequenceLength(std::string_view s) {
  const auto c = static_cast<uint8_t>(s[0]);
  size_t n;
  uint8_t lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  const auto c1 = static_cast<uint8_t>(s[1]);
  if (c1 < lo || c1 > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if ((static_cast<uint8_t>(s[i]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

uint32_t DecodeUtf8(std::string_view s, size_t n) {
  const auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(s[i])); };
  if (n == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (n == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

// Code points a terminal acts on (C1 controls: U+009B is CSI) or that reorder or break what the
// reader sees (Unicode bidirectional controls, UAX #9 §2; line and paragraph separators).
bool IsUnsafeCodePoint(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void AppendEscaped(std::string_view bytes, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char c : bytes) {
    const auto byte = static_cast<uint8_t>(c);
    out->append("\\x");
    out->push_back(kHex[byte >> 4]);
    out->push_back(kHex[byte & 15]);
  }
}

}  // namespace

std::string EscapedExcerpt(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<uint8_t>(text[i]);
    size_t n = 1;
    bool escape;
    if (c < 0x80) {
      escape = c < 0x20 || c == 0x7F || c == '\\';
    } else {
      n = Utf8SequenceLength(text.substr(i));
      escape = n == 0 || IsUnsafeCodePoint(DecodeUtf8(text.substr(i), n));
      if (n == 0) n = 1;  // one byte of invalid UTF-8 at a time
    }
    const size_t cost = escape ? 4 * n : n;
    if (out.size() + cost > max_bytes) break;
    if (escape) {
      AppendEscaped(text.substr(i, n), &out);
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace urlsieve::cli
