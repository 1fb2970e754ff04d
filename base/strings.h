// Small string helpers every layer shares: trimming, ASCII case folding, whole-text integer
// parsing and round-trip double formatting. They replace the private copies that files used to
// keep in anonymous namespaces, each with slightly different rules; the rules are spelled out
// here, and a caller that needs another character set names it.
//
// All functions work on bytes: "ASCII" ones change or compare only A-Z/a-z and leave every other
// byte (UTF-8 included) as it is, whatever the C locale. Prefix tests without case folding are
// std::string_view::starts_with (C++20).
//
// Thread-safety: pure functions.
#ifndef URLSIEVE_BASE_STRINGS_H_
#define URLSIEVE_BASE_STRINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace urlsieve {

// Space and horizontal tab: HTTP's optional white space (RFC 9110 §5.6.3) and robots.txt's
// (RFC 9309 §2.2).
inline constexpr std::string_view kBlanks = " \t";
// kBlanks plus the line ends CR and LF.
inline constexpr std::string_view kBlanksAndLineEnds = " \t\r\n";

// `s` without the leading / trailing / leading and trailing bytes that are in `chars`.
std::string_view TrimLeft(std::string_view s, std::string_view chars = kBlanks);
std::string_view TrimRight(std::string_view s, std::string_view chars = kBlanks);
std::string_view Trim(std::string_view s, std::string_view chars = kBlanks);

// 'A'-'Z' to 'a'-'z'; any other byte unchanged.
constexpr char AsciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
std::string AsciiLowercase(std::string_view s);

// Equality and prefix tests that fold ASCII letters only.
inline bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}
inline bool StartsWithIgnoreAsciiCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreAsciiCase(s.substr(0, prefix.size()), prefix);
}

// The whole of `text` as a decimal integer: digits only, with an optional leading '-' for
// ParseInt64 (no '+', no white space, no other base); leading zeros are allowed. nullopt when
// `text` is empty, holds anything else, or the value does not fit (overflow is checked).
std::optional<int64_t> ParseInt64(std::string_view text);
std::optional<uint64_t> ParseUint64(std::string_view text);

// printf's "%.17g": 17 significant digits, trailing zeros dropped, which always reads back as
// the same double (0.001 → "0.001", 1e-05 → "1.0000000000000001e-05"). Stored settings (the
// state directory's meta, the Redis set's meta) are written with it: its output must not change.
std::string FormatDouble(double value);

}  // namespace urlsieve

#endif  // URLSIEVE_BASE_STRINGS_H_
