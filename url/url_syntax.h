// The pieces of URL syntax that the canonicalizer (url_canonicalizer.cc) and the resolver
// (url_resolve.cc) share: the RFC 3986 §3.1 scheme matcher and the errors both return.
//
// Thread-safety: pure functions.
#ifndef URLSIEVE_URL_URL_SYNTAX_H_
#define URLSIEVE_URL_URL_SYNTAX_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"
#include "url/url_chars.h"

namespace urlsieve {

// Matches RFC 3986 §3.1 scheme ":" at the start of `s`; returns the scheme length or 0.
inline size_t SchemeLength(std::string_view s) {
  if (s.empty() || !((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z')) return 0;
  size_t i = 1;
  while (i < s.size() && url_chars::Is(s[i], url_chars::kSchemeChar)) ++i;
  return (i < s.size() && s[i] == ':') ? i : 0;
}

// InvalidArgument with `reason` (a URL the canonicalizer or the resolver refuses).
Status InvalidUrl(std::string reason);
// InvalidArgument: a URL (or key) of `size` bytes over the maximum length `max`.
Status UrlTooLong(size_t size, size_t max);
// InvalidArgument naming `scheme` (lowercased, at most 32 bytes): only http and https are crawled.
Status UnsupportedScheme(std::string_view scheme);

}  // namespace urlsieve

#endif  // URLSIEVE_URL_URL_SYNTAX_H_
