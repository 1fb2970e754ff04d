// UrlParts: the views of an absolute URL the frontier works with — the URL, its origin (the
// robots.txt origin and the source of its politeness key), its host and the rest (path and
// query), which is all a queue stores.
//
// A URL comes from the seen stage parsed (CanonicalUrl, url/url_canonicalizer.h): PartsOf takes
// its views without parsing it again. Only a URL held as a string (the pending set restored from a
// checkpoint, a test, a benchmark) is split, once, by SplitUrl, which does not canonicalize.
// Thread-safety: pure functions; the views point into the caller's URL.
#ifndef URLSIEVE_URL_URL_PARTS_H_
#define URLSIEVE_URL_URL_PARTS_H_

#include <string_view>

#include "url/url_canonicalizer.h"

namespace urlsieve {

struct UrlParts {
  std::string_view url;     // the whole URL as pushed
  std::string_view origin;  // "scheme://[userinfo@]host[:port]"
  std::string_view host;    // "a.com", "[::1]", "10.0.0.1"
  std::string_view rest;    // path and query, no fragment ("/a?b"; may be "" or start with '?')
};

// The parts of a parsed URL (its fetch form): no parsing.
inline UrlParts PartsOf(const CanonicalUrl& url) {
  return {url.key(), url.origin(), url.host(), url.path_and_query()};
}

// Splits "scheme://authority[rest][#fragment]". False (and *parts unchanged) for anything with no
// scheme or no host.
bool SplitUrl(std::string_view url, UrlParts* parts);

}  // namespace urlsieve

#endif  // URLSIEVE_URL_URL_PARTS_H_
