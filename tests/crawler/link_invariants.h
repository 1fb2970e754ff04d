// What the links of any page body must satisfy: checked by fuzz/fuzz_links.cc on random input and
// by link_extractor_test.cc on the fuzzer's corpus. Links are absolute http(s) URLs without
// fragments, within the length and count limits, and the canonicalizer accepts them or refuses
// them with a reason (Resolve() does not validate hosts; the crawler records refusals in
// rejected.jsonl). Input: the first byte picks whether nofollow is obeyed, the rest is the HTML.
#ifndef URLSIEVE_TESTS_CRAWLER_LINK_INVARIANTS_H_
#define URLSIEVE_TESTS_CRAWLER_LINK_INVARIANTS_H_

#include <string>
#include <string_view>

#include "crawler/page/link_extractor.h"
#include "url/url_canonicalizer.h"

namespace urlsieve::testing {

inline bool IsAbsoluteHttp(std::string_view url) {
  return url.starts_with("http://") || url.starts_with("https://");
}

// Empty if the links extracted from `input` keep every invariant; else what is wrong.
inline std::string LinkInvariantViolation(std::string_view input) {
  if (input.empty()) return "";
  static const UrlCanonicalizer canonicalizer;
  LinkExtractor::Options options;
  options.obey_nofollow = (input[0] & 1) != 0;
  options.max_links = 64;  // small, so the fuzzer reaches the limit
  const LinkExtractor extractor(&canonicalizer, options);
  const PageLinks page = extractor.Extract(input.substr(1), "http://example.com/dir/page.html");
  if (!IsAbsoluteHttp(page.base)) return "base is not an absolute http(s) URL: " + page.base;
  if (page.canonical && !IsAbsoluteHttp(*page.canonical))
    return "bad canonical: " + *page.canonical;
  if (page.links.size() > options.max_links) return "more links than max_links";
  for (const ExtractedLink& link : page.links) {
    if (!IsAbsoluteHttp(link.url)) return "link is not an absolute http(s) URL: " + link.url;
    if (link.url.find('#') != std::string::npos) return "link keeps a fragment: " + link.url;
    if (link.url.size() > canonicalizer.options().max_length) return "link too long: " + link.url;
    if (options.obey_nofollow && link.nofollow) return "nofollow link kept: " + link.url;
    const Result<CanonicalUrl> canonical = canonicalizer.Canonicalize(link.url);
    if (!canonical.ok() && (canonical.status().code() != StatusCode::kInvalidArgument ||
                            canonical.status().message().empty())) {
      return "link refused without a reason: " + link.url;
    }
  }
  return "";
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_LINK_INVARIANTS_H_
