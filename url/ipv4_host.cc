#include "url/ipv4_host.h"

#include "url/url_chars.h"

namespace urlsieve {
namespace {

// Drops one trailing empty label ("1.2.3.4." names the same host as "1.2.3.4").
std::string_view WithoutTrailingDot(std::string_view host) {
  if (host.size() > 1 && host.back() == '.') host.remove_suffix(1);
  return host;
}

// WHATWG "IPv4 number parser": 0x/0X prefix is hex, a leading 0 is octal, otherwise decimal.
// Values are saturated above 2^32 so long digit strings cannot overflow.
std::optional<uint64_t> ParseNumber(std::string_view part) {
  if (part.empty()) return std::nullopt;
  int radix = 10;
  if (part.size() >= 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
    radix = 16;
    part.remove_prefix(2);
  } else if (part.size() >= 2 && part[0] == '0') {
    radix = 8;
    part.remove_prefix(1);
  }
  uint64_t value = 0;
  for (char c : part) {
    const int d = url_chars::HexValue(c);
    if (d < 0 || d >= radix) return std::nullopt;
    value = value * radix + d;
    if (value > (uint64_t{1} << 32)) value = uint64_t{1} << 32;
  }
  return value;
}

}  // namespace

bool EndsInIpv4Number(std::string_view host) {
  host = WithoutTrailingDot(host);
  // Scanned from the end: on every host this costs only the length of its last label.
  size_t begin = host.size();
  while (begin > 0 && host[begin - 1] != '.') --begin;
  const std::string_view last = host.substr(begin);
  if (last.empty() || last[0] < '0' || last[0] > '9') return false;  // cheap common exit
  bool all_digits = true;
  for (char c : last) all_digits = all_digits && c >= '0' && c <= '9';
  if (all_digits) return true;
  if (last.size() < 2 || last[0] != '0' || (last[1] != 'x' && last[1] != 'X')) return false;
  for (char c : last.substr(2)) {
    if (!url_chars::Is(c, url_chars::kHexDigit)) return false;
  }
  return true;
}

std::optional<uint32_t> ParseIpv4(std::string_view host) {
  host = WithoutTrailingDot(host);
  uint64_t numbers[4];
  size_t count = 0;
  size_t begin = 0;
  for (;;) {
    if (count == 4) return std::nullopt;
    const size_t dot = host.find('.', begin);
    const std::string_view part =
        host.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin);
    const std::optional<uint64_t> n = ParseNumber(part);
    if (!n) return std::nullopt;
    numbers[count++] = *n;
    if (dot == std::string_view::npos) break;
    begin = dot + 1;
  }
  // Every part but the last is one byte; the last fills the remaining 5 - count bytes.
  for (size_t i = 0; i + 1 < count; ++i) {
    if (numbers[i] > 255) return std::nullopt;
  }
  if (numbers[count - 1] >= (uint64_t{1} << (8 * (5 - count)))) return std::nullopt;
  uint64_t address = numbers[count - 1];
  for (size_t i = 0; i + 1 < count; ++i) address += numbers[i] << (8 * (3 - i));
  return static_cast<uint32_t>(address);
}

size_t FormatIpv4(uint32_t address, char* out) {
  char* p = out;
  for (int shift = 24; shift >= 0; shift -= 8) {
    const unsigned byte = (address >> shift) & 0xFF;
    if (byte >= 100) *p++ = static_cast<char>('0' + byte / 100);
    if (byte >= 10) *p++ = static_cast<char>('0' + byte / 10 % 10);
    *p++ = static_cast<char>('0' + byte % 10);
    if (shift != 0) *p++ = '.';
  }
  return static_cast<size_t>(p - out);
}

}  // namespace urlsieve
