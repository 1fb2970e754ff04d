#include "base/strings.h"

#include <charconv>
#include <cstdio>

namespace urlsieve {
namespace {

template <typename Int>
std::optional<Int> ParseWhole(std::string_view text) {
  if (text.empty()) return std::nullopt;
  Int value = 0;
  const char* end = text.data() + text.size();
  // from_chars takes no '+' and no white space, and reports a value out of range.
  auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || stop != end) return std::nullopt;
  return value;
}

}  // namespace

std::string_view TrimLeft(std::string_view s, std::string_view chars) {
  const size_t first = s.find_first_not_of(chars);
  return s.substr(first == std::string_view::npos ? s.size() : first);
}

std::string_view TrimRight(std::string_view s, std::string_view chars) {
  const size_t last = s.find_last_not_of(chars);
  return s.substr(0, last == std::string_view::npos ? 0 : last + 1);
}

std::string_view Trim(std::string_view s, std::string_view chars) {
  return TrimRight(TrimLeft(s, chars), chars);
}

std::string AsciiLowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

std::optional<int64_t> ParseInt64(std::string_view text) { return ParseWhole<int64_t>(text); }

std::optional<uint64_t> ParseUint64(std::string_view text) { return ParseWhole<uint64_t>(text); }

std::string FormatDouble(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

}  // namespace urlsieve
