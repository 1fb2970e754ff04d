// Character classes and small byte helpers shared by the URL parsing code (RFC 3986 §2, §3).
//
// One 256-entry table answers every "may this byte appear here?" question with a single load, so
// the canonicalizer never branches on character ranges in its inner loops.
// Thread-safety: constant data and pure functions.
#ifndef URLSIEVE_URL_URL_CHARS_H_
#define URLSIEVE_URL_URL_CHARS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace urlsieve::url_chars {

enum : uint16_t {
  kUnreserved = 1 << 0,    // RFC 3986 §2.3: ALPHA DIGIT - . _ ~
  kSubDelim = 1 << 1,      // RFC 3986 §2.2: ! $ & ' ( ) * + , ; =
  kPathLiteral = 1 << 2,   // pchar minus pct-encoded (§3.3): unreserved, sub-delims, ':' and '@'
  kQueryLiteral = 1 << 3,  // §3.4: pchar, '/' and '?'
  kHexDigit = 1 << 4,
  kSchemeChar = 1 << 5,     // §3.1: ALPHA DIGIT + - . (the first one must be ALPHA)
  kHostLiteral = 1 << 6,    // reg-name without pct-encoded (§3.2.2): unreserved and sub-delims
  kSegmentEnd = 1 << 7,     // / \ ? #: ends the authority or a path segment of an http(s) URL
  kQueryEnd = 1 << 8,       // #
  kAuthorityMark = 1 << 9,  // '@' and ':', which split an authority
  kLabelMark = 1 << 10,     // '.' and '-', which matter to host label checks
  // The query of an http(s) URL as a browser sends it: kQueryLiteral without '\'', which the WHATWG
  // URL Standard §1.3 "special-query percent-encode set" encodes for special schemes.
  kSpecialQueryLiteral = 1 << 11,
};

constexpr std::array<uint16_t, 256> MakeTable() {
  std::array<uint16_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    uint16_t f = 0;
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    const bool digit = c >= '0' && c <= '9';
    if (alpha || digit || c == '-' || c == '.' || c == '_' || c == '~') f |= kUnreserved;
    if (std::string_view("!$&'()*+,;=").find(static_cast<char>(c)) != std::string_view::npos &&
        c != 0) {
      f |= kSubDelim;
    }
    if ((f & (kUnreserved | kSubDelim)) || c == ':' || c == '@') f |= kPathLiteral;
    if ((f & kPathLiteral) || c == '/' || c == '?') f |= kQueryLiteral;
    if ((f & kQueryLiteral) && c != '\'') f |= kSpecialQueryLiteral;
    if (digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) f |= kHexDigit;
    if (alpha || digit || c == '+' || c == '-' || c == '.') f |= kSchemeChar;
    if (f & (kUnreserved | kSubDelim)) f |= kHostLiteral;
    if (c == '/' || c == '\\' || c == '?' || c == '#') f |= kSegmentEnd;
    if (c == '#') f |= kQueryEnd;
    if (c == '@' || c == ':') f |= kAuthorityMark;
    if (c == '.' || c == '-') f |= kLabelMark;
    t[c] = f;
  }
  return t;
}

inline constexpr std::array<uint16_t, 256> kTable = MakeTable();

inline bool Is(char c, uint16_t mask) { return (kTable[static_cast<uint8_t>(c)] & mask) != 0; }

inline int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

inline constexpr char kUpperHex[] = "0123456789ABCDEF";

constexpr char ToLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

constexpr std::array<char, 256> MakeLowerTable() {
  std::array<char, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = ToLower(static_cast<char>(c));
  return t;
}
inline constexpr std::array<char, 256> kLower = MakeLowerTable();

// ASCII case-insensitive equality; `lower` must already be lowercase.
inline bool EqualsLower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (ToLower(s[i]) != lower[i]) return false;
  }
  return true;
}

// True if `s` is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool IsValidUtf8(std::string_view s);

}  // namespace urlsieve::url_chars

#endif  // URLSIEVE_URL_URL_CHARS_H_
