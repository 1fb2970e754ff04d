#include "url/ipv6_host.h"

#include <utility>

#include "url/url_chars.h"

namespace urlsieve {

// A transcription of the WHATWG "IPv6 parser" state machine.
std::optional<Ipv6Address> ParseIpv6(std::string_view text) {
  Ipv6Address address{};
  int piece = 0;
  int compress = -1;
  size_t i = 0;
  const size_t n = text.size();
  auto at = [&](size_t k) { return k < n ? text[k] : '\0'; };
  if (at(0) == ':') {
    if (at(1) != ':') return std::nullopt;
    i = 2;
    compress = ++piece;
  }
  while (i < n) {
    if (piece == 8) return std::nullopt;
    if (text[i] == ':') {
      if (compress != -1) return std::nullopt;
      ++i;
      compress = ++piece;
      continue;
    }
    unsigned value = 0;
    size_t length = 0;
    while (length < 4 && i < n && url_chars::Is(text[i], url_chars::kHexDigit)) {
      value = value * 16 + url_chars::HexValue(text[i]);
      ++i;
      ++length;
    }
    if (at(i) == '.') {  // an embedded IPv4 address fills the last two pieces
      if (length == 0 || piece > 6) return std::nullopt;
      i -= length;
      int numbers_seen = 0;
      while (i < n) {
        if (numbers_seen > 0) {
          if (text[i] != '.' || numbers_seen >= 4) return std::nullopt;
          ++i;
        }
        if (!(at(i) >= '0' && at(i) <= '9')) return std::nullopt;
        int part = -1;
        while (at(i) >= '0' && at(i) <= '9') {
          const int digit = text[i] - '0';
          if (part == 0) return std::nullopt;  // no leading zeros
          part = part < 0 ? digit : part * 10 + digit;
          if (part > 255) return std::nullopt;
          ++i;
        }
        address[piece] = static_cast<uint16_t>(address[piece] * 0x100 + part);
        ++numbers_seen;
        if (numbers_seen == 2 || numbers_seen == 4) ++piece;
      }
      if (numbers_seen != 4) return std::nullopt;
      break;
    }
    if (at(i) == ':') {
      ++i;
      if (i == n) return std::nullopt;
    } else if (i < n) {
      return std::nullopt;
    }
    address[piece++] = static_cast<uint16_t>(value);
  }
  if (compress != -1) {
    int swaps = piece - compress;
    piece = 7;
    while (piece != 0 && swaps > 0) {
      std::swap(address[piece], address[compress + swaps - 1]);
      --piece;
      --swaps;
    }
  } else if (piece != 8) {
    return std::nullopt;
  }
  return address;
}

size_t FormatIpv6(const Ipv6Address& address, char* out) {
  // RFC 5952 §4.2: compress the first longest run of at least two zero pieces.
  int best = -1, best_len = 1;
  for (int i = 0; i < 8;) {
    if (address[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && address[j] == 0) ++j;
    if (j - i > best_len) {
      best = i;
      best_len = j - i;
    }
    i = j;
  }
  char* p = out;
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      *p++ = ':';
      if (i == 0) *p++ = ':';
      i += best_len - 1;
      continue;
    }
    const unsigned v = address[i];
    bool started = false;
    for (int shift = 12; shift >= 0; shift -= 4) {  // RFC 5952 §4.1, §4.3: no leading zeros
      const unsigned d = (v >> shift) & 0xF;
      if (d != 0 || started || shift == 0) {
        *p++ = "0123456789abcdef"[d];
        started = true;
      }
    }
    if (i != 7) *p++ = ':';
  }
  return static_cast<size_t>(p - out);
}

}  // namespace urlsieve
