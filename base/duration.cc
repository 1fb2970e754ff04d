#include "base/duration.h"

#include <cstdint>
#include <limits>

namespace urlsieve {

namespace {

Status BadDuration(std::string_view text) {
  return Status::InvalidArgument("bad duration '" + std::string(text) +
                                 "': expected a whole number and a unit s, m, h, d or w "
                                 "(e.g. 30s, 90m, 12h, 7d), or 0");
}

}  // namespace

Result<std::chrono::seconds> ParseDuration(std::string_view text) {
  if (text == "0") return std::chrono::seconds(0);
  if (text.size() < 2) return BadDuration(text);
  int64_t unit = 0;
  switch (text.back()) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    case 'w': unit = 7 * 86400; break;
    default: return BadDuration(text);
  }
  int64_t value = 0;
  for (char c : text.substr(0, text.size() - 1)) {
    if (c < '0' || c > '9') return BadDuration(text);
    if (value > (std::numeric_limits<int64_t>::max() / unit - (c - '0')) / 10) {
      return BadDuration(text);
    }
    value = value * 10 + (c - '0');
  }
  return std::chrono::seconds(value * unit);
}

std::string FormatDuration(std::chrono::seconds duration) {
  int64_t s = duration.count();
  if (s == 0) return "0";
  if (s % 86400 == 0) return std::to_string(s / 86400) + "d";
  if (s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

}  // namespace urlsieve
