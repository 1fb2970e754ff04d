// FrontierOptions: politeness, limits, robots and memory settings of a Frontier.
//
// The defaults are those of a polite public crawler: one request at a time per key, 1 s between
// requests, robots.txt obeyed. A user crawling their own servers sets `delay` to 0 and raises
// `per_key_concurrency`. Thread-safety: a plain value.
#ifndef URLSIEVE_FRONTIER_FRONTIER_OPTIONS_H_
#define URLSIEVE_FRONTIER_FRONTIER_OPTIONS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"

namespace urlsieve {

// What URLs share one politeness budget (one queue, one delay, one concurrency limit).
enum class PolitenessKeyKind {
  kOrigin,             // "scheme://host[:port]" (default)
  kRegistrableDomain,  // eTLD+1 from the Public Suffix List (libpsl): a.x.com and b.x.com share
  kCustom,             // FrontierOptions::key_function, e.g. the resolved IP address of the host
};

// What to do when a site's Crawl-delay is above `crawl_delay_cap`.
enum class CrawlDelayOverCap {
  kSkip,  // reject the origin's URLs (RejectReason::kCrawlDelayTooLong)
  kCap,   // crawl it at `crawl_delay_cap`
};

struct FrontierOptions {
  // Product token matched against robots.txt user-agent lines ("urlsieve/0.1" selects "urlsieve").
  std::string user_agent = "urlsieve";
  bool obey_robots = true;

  PolitenessKeyKind key_kind = PolitenessKeyKind::kOrigin;
  // For kCustom: maps an origin to its politeness key. Called once per new origin, under the
  // frontier's lock, so it must be quick and must not call the frontier (look the IP up in the
  // crawler's DNS cache, for instance). Its answer for an origin is kept for the crawl.
  std::function<std::string(std::string_view origin)> key_function;

  // Delay between the starts of two requests to a key (and from the end of one to the next start)
  // = max(delay, Crawl-delay within [crawl_delay_floor, crawl_delay_cap],
  //       adaptive_factor × last fetch time), plus a random jitter of up to `jitter` × that.
  Clock::Duration delay = std::chrono::seconds(1);
  Clock::Duration crawl_delay_floor = Clock::Duration::zero();
  Clock::Duration crawl_delay_cap = std::chrono::seconds(60);
  CrawlDelayOverCap crawl_delay_over_cap = CrawlDelayOverCap::kSkip;
  double adaptive_factor = 0;  // 0 disables it; e.g. 2 keeps a server at most ~1/3 busy
  double jitter = 0;           // e.g. 0.1 adds up to 10 %
  uint64_t jitter_seed = 0x9e3779b97f4a7c15;
  uint32_t per_key_concurrency = 1;

  // Back-off after connection errors and 5xx: backoff_initial × 2^(failures-1), at most
  // backoff_max. 429 and 503 wait for their Retry-After when present (RFC 9110 §10.2.3); one
  // asking for more than max_retry_after retires the key (RejectReason::kRetryAfterTooLong), so
  // that "Retry-After: 999999" cannot stall a crawl.
  Clock::Duration backoff_initial = std::chrono::seconds(5);
  Clock::Duration backoff_max = std::chrono::minutes(30);
  Clock::Duration max_retry_after = std::chrono::minutes(10);
  // After this many consecutive failures a key is retired and its URLs rejected (kKeyRetired).
  uint32_t max_consecutive_failures = 5;
  // A failed fetch is queued again (at the back of its key) this many times at most.
  uint32_t max_retries = 2;

  // Among due keys, the one whose next URL is shallowest goes first (breadth-first); when false,
  // due keys take turns in the order they became due. Inside a key the order is always FIFO.
  bool breadth_first = true;

  // Limits; 0 (or no max_depth) means none. Depth counts from 0 for seeds.
  std::optional<uint32_t> max_depth;
  uint64_t max_pages_per_key = 0;
  uint64_t max_total_pages = 0;

  // RFC 9309 §2.3.1.4: while robots.txt is unreachable (5xx, no response) the origin is not
  // crawled; it is asked again after a back-off (as above) at most this many times, then the
  // origin's URLs are rejected (kRobotsUnreachable). 4 retries = 75 s with the default back-off.
  uint32_t robots_retries = 4;

  // RFC 9309 §2.4: a cached robots.txt is used for at most 24 hours.
  Clock::Duration robots_ttl = std::chrono::hours(24);

  // Memory bound: at most this many pending URLs are kept in RAM (0 = no bound); the others go to
  // the scratch SQLite file `spill_path` ("" = an anonymous temporary file) and are paged in per
  // key. The bound is soft by one page-in batch per key (spill_batch).
  size_t max_pending_in_memory = 0;
  std::string spill_path;
  uint32_t spill_batch = 64;
  // Record the changes for Frontier::Checkpoint. Without a state database, turn this off: the
  // changes between two checkpoints hold a copy of each new URL and its parent.
  bool checkpoints = true;
};

}  // namespace urlsieve

#endif  // URLSIEVE_FRONTIER_FRONTIER_OPTIONS_H_
