// A small, strict RFC 3986 validator for canonical keys, used by the tests and the fuzzer to check
// the canonicalizer's promise that every key is a valid URI. Deliberately written from the
// Appendix A grammar and independent of the canonicalizer's own tables.
// Thread-safety: pure functions.
#ifndef URLSIEVE_TESTS_URL_URI_VALIDATOR_H_
#define URLSIEVE_TESTS_URL_URI_VALIDATOR_H_

#include <arpa/inet.h>

#include <cstring>
#include <string>
#include <string_view>

namespace urlsieve::testing {

inline bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
inline bool IsUnreserved(char c) {
  return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}
inline bool IsSubDelim(char c) { return c != '\0' && std::strchr("!$&'()*+,;=", c) != nullptr; }

// Checks s[i..] is `allowed`-chars or pct-encoded up to `end`.
template <typename Allowed>
bool ValidRun(std::string_view s, Allowed allowed) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      if (i + 2 >= s.size() || !IsHex(s[i + 1]) || !IsHex(s[i + 2])) return false;
      i += 2;
    } else if (!allowed(s[i])) {
      return false;
    }
  }
  return true;
}

// URI = scheme ":" "//" authority path-abempty [ "?" query ]  (RFC 3986 §3, no fragment: keys
// never carry one). Only the authority form is accepted: keys are always http(s) URLs.
inline bool IsValidUriKey(std::string_view s) {
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || !IsAlpha(s[0])) return false;
  for (size_t i = 1; i < colon; ++i) {
    if (!IsAlpha(s[i]) && !IsDigit(s[i]) && s[i] != '+' && s[i] != '-' && s[i] != '.') return false;
  }
  if (s.substr(colon + 1, 2) != "//") return false;
  s.remove_prefix(colon + 3);
  const size_t authority_end = s.find_first_of("/?#");
  std::string_view authority = s.substr(0, authority_end);
  s.remove_prefix(authority.size());
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    if (!ValidRun(authority.substr(0, at),
                  [](char c) { return IsUnreserved(c) || IsSubDelim(c) || c == ':'; })) {
      return false;
    }
    authority.remove_prefix(at + 1);
  }
  std::string_view host = authority, port;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    const std::string literal(authority.substr(1, close - 1));
    in6_addr address;
    if (inet_pton(AF_INET6, literal.c_str(), &address) != 1) return false;
    host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return false;
      port = authority.substr(close + 2);
    }
  } else {
    const size_t c = authority.find(':');
    if (c != std::string_view::npos) {
      host = authority.substr(0, c);
      port = authority.substr(c + 1);
    }
    if (!ValidRun(host, [](char ch) { return IsUnreserved(ch) || IsSubDelim(ch); })) return false;
  }
  for (char c : port) {
    if (!IsDigit(c)) return false;
  }
  const size_t query = s.find('?');
  const std::string_view path = s.substr(0, query);
  if (!path.empty() && path[0] != '/') return false;
  auto pchar = [](char c) { return IsUnreserved(c) || IsSubDelim(c) || c == ':' || c == '@'; };
  if (!ValidRun(path, [&](char c) { return pchar(c) || c == '/'; })) return false;
  if (query != std::string_view::npos &&
      !ValidRun(s.substr(query + 1), [&](char c) { return pchar(c) || c == '/' || c == '?'; })) {
    return false;
  }
  return true;
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_URL_URI_VALIDATOR_H_
