// GeneratedSite: a deterministic site full of the traps a crawler must survive, for crawl tests.
//
// Host 0 (the main host) serves, among ~50 pages:
//   /                      index linking to everything below and to the other hosts' roots
//   /pages/1..N            a chain of ordinary pages (depth grows along it)
//   /cycle/{a,b,c}         a link cycle
//   /spellings             /pages/1, /~user/ and /café linked in many equivalent spellings
//                          (scheme case, ./ and ../, %7E vs ~, %-hex case, fragments, //authority)
//   /nofollow              rel=nofollow link to /only-via-nofollow (must not be fetched)
//   /meta-nofollow         <meta name=robots content=nofollow>; links /only-via-meta-nofollow
//   /base/                 <base href="/base-target/"> + href="child" → /base-target/child
//   /calendar/2026/11      an infinite calendar: every month links to the next one
//   /redirect/301, /redirect/302, /chain/1 → 2 → 3 → end, /loop/a ⇄ /loop/b
//   /private/...           disallowed by robots.txt (except /private/public-note, allowed)
//   /pages/3?session=abc   disallowed by a robots.txt wildcard rule
//   /large                 HTML larger than a crawler's body cap
//   /gzip                  Content-Encoding: gzip HTML, linking /gzip-child
//   /gzip-bomb             small on the wire, gzip_bomb_bytes once decoded
//   /slow                  answers after slow_delay
//   /image.png, /doc.pdf   non-HTML content
//   /missing (404), /error (500), /busy (429 + Retry-After: 1 the first time, then 200)
// Unlinked helpers for fetcher tests: /status/<code> (429/503 carry Retry-After: 2, or
//   /status/<code>?retry_after=<seconds>),
//   /size/<n> (an n-byte body), /gzip-size/<n> (gzip of n decoded bytes), /slow?ms=<n>,
//   /trickle?bytes=<n>&ms=<interval>, /robots-hops/<n> (n redirects, then a robots.txt).
// An unknown query is ignored: the path's page is served.
// Hosts 1.. are small satellites (/, /s/1..k) that differ by robots.txt: host 1 answers 404
// (allow all), host 2 redirects it to /moved-robots.txt (which disallows /s/3), host 3 answers 503
// (disallow all); then the pattern repeats.
//
// expectations(h) says, per host, which resources a correct crawl that has every host in scope
// must request, must never request, and may request more than once (transient failures a crawler
// may retry). Resources are percent-decoded paths (+ "?query"), as in RequestLog. The calendar
// trap has no expectation: how deep a crawler goes into it is the trap guards' business.
//
// Thread-safety: thread-safe (Handle may run concurrently).
#ifndef URLSIEVE_TOOLS_SITE_SERVER_GENERATED_SITE_H_
#define URLSIEVE_TOOLS_SITE_SERVER_GENERATED_SITE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tools/site_server/site.h"

namespace urlsieve::site {

struct GeneratedSiteOptions {
  int page_count = 20;                                // /pages/1..N on the main host
  int satellite_pages = 5;                            // /s/1..k on every other host (at least 3)
  std::uint64_t large_page_bytes = 12 * 1024 * 1024;  // > the default 10 MiB cap
  std::uint64_t gzip_bomb_bytes = 64 * 1024 * 1024;
  std::chrono::milliseconds slow_delay{5000};
  std::string crawl_delay = "0.1";  // Crawl-delay line of the main host's robots.txt; "" = none
};

struct HostExpectations {
  std::set<std::string> must_fetch;
  std::set<std::string> must_not_fetch;
  std::set<std::string> may_repeat;
};

class GeneratedSite : public Site {
 public:
  // origins[h] = "http://127.0.0.1:<port of host h>"; at least one.
  GeneratedSite(GeneratedSiteOptions options, std::vector<std::string> origins);

  SiteResponse Handle(const SiteRequest& request) override;
  const HostExpectations& expectations(int host) const { return expectations_.at(host); }
  int hosts() const { return static_cast<int>(origins_.size()); }

 private:
  enum class Expect { kFetch, kNotFetch, kNone };
  void Add(int host, const std::string& resource, SiteResponse response, Expect expect);
  void BuildMainHost();
  void BuildSatellite(int host);
  SiteResponse Dynamic(const SiteRequest& request);
  const std::string& GzipBomb();

  const GeneratedSiteOptions options_;
  const std::vector<std::string> origins_;
  std::vector<std::map<std::string, SiteResponse>> pages_;  // per host, by resource
  std::vector<HostExpectations> expectations_;
  std::unique_ptr<std::atomic<bool>[]> busy_served_;  // per host: /busy answered 429 already
  std::once_flag bomb_once_;
  std::string bomb_;
};

// Gzip (RFC 1952) of `data`.
std::string GzipCompress(const std::string& data);

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_GENERATED_SITE_H_
