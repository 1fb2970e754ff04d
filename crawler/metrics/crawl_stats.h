// CrawlStats: the crawl's running totals, written to stats.json and printed as a summary table.
//
// Fed by the crawl loop once per fetch (RecordPage, with the PageRecord it also writes to
// pages.jsonl) and once per rejected URL or link (RecordRejection, e.g. "robots" or a
// LinkDropReason name). Scope keeps its own lock-free counters on the hot path; merge them into a
// snapshot with CrawlStatsSnapshot::AddRejections. A PageRecord's error is "kind: detail" by
// convention; errors are counted by kind.
//
// The totals describe the whole crawl, not only this run: a crawl resumed with --resume restores
// the totals its last checkpoint recorded (CrawlStats::Resume, crawl_checkpoint.h), which match
// its outputs as of that checkpoint; the fetches a kill cut off after it are cut from the outputs
// and fetched again, and so counted once. The crawl's duration is the sum of its sessions' running
// times, each counted up to its last checkpoint (so, like those fetches, the time a killed session
// spent after its last checkpoint is not counted).
// Thread-safety: all methods are safe to call concurrently (one mutex; a few calls per fetch).
#ifndef URLSIEVE_CRAWLER_METRICS_CRAWL_STATS_H_
#define URLSIEVE_CRAWLER_METRICS_CRAWL_STATS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "crawler/output/page_record.h"

namespace urlsieve {

struct CrawlStatsSnapshot {
  uint64_t pages = 0;  // fetches recorded, successful or not
  uint64_t bytes = 0;
  uint64_t links_found = 0;
  uint64_t links_new = 0;
  double duration_s = 0;       // summed over the sessions
  uint64_t sessions = 1;       // runs of this crawl (the first and each --resume) that count here
  uint64_t session_pages = 0;  // of `pages`, those fetched by this run
  double session_duration_s = 0;           // this run's part of duration_s
  std::map<int, uint64_t> status;          // HTTP status -> count (0 = no response)
  std::map<std::string, uint64_t> errors;  // error kind -> count
  std::map<std::string, uint64_t, std::less<>> rejections;  // reason -> count
  // Re-fetches of a re-crawl by what they found (RefetchResultName: "not_modified", "unchanged",
  // "changed"; docs/features/recrawl.md, "Re-crawl"), from PageRecord::refetch.
  std::map<std::string, uint64_t> refetches;
  // Parsed HTML pages by the encoding they were decoded from (PageRecord::encoding).
  std::map<std::string, uint64_t> encodings;
  // Sitemap counters by name (docs/features/sitemaps.md, "Sitemaps"; CrawlStats::RecordSitemap).
  std::map<std::string, uint64_t> sitemaps;
  // Body bytes by the status class of the fetch (StatusClassName: "2xx", "none"...).
  std::map<std::string, uint64_t> bytes_by_status_class;
  // The content-seen test (docs/features/content-seen.md, "In the crawl"): pages found to be
  // "exact" or "near" duplicates of a page fetched before (PageRecord::duplicate_of,
  // near_duplicate_of), and "unknown": pages the test could not answer for (a shared set that did
  // not answer), recorded as firsts.
  std::map<std::string, uint64_t> duplicates;
  // The seen stage (CrawlStats::RecordSeen, from Crawler::PushNew): keys it answered (seeds, links
  // in scope, sitemap URLs; not a batch a shared set never answered) and of those, the keys it
  // told new.
  uint64_t seen_inserts = 0;
  uint64_t seen_new = 0;

  void AddRejections(const std::vector<std::pair<std::string_view, uint64_t>>& counts);
  // `status` summed by class (StatusClassName).
  std::map<std::string, uint64_t> PagesByStatusClass() const;
  double pages_per_s() const { return duration_s > 0 ? pages / duration_s : 0; }

  // {"pages", "bytes", "links_found", "links_new", "duration_s", "pages_per_s", "bytes_per_s",
  //  "status": {"200": n, ...}, "errors": {kind: n}, "rejections": {reason: n}, "sessions",
  //  "session": {"pages", "duration_s"}, "refetches": {"not_modified": n, "unchanged": n,
  //  "changed": n} (each 0 when nothing was re-fetched), "encodings": {name: pages},
  //  "sitemaps": {counter: n}, "duplicates": {"exact": n, "near": n, "unknown": n}}: every count is
  //  over the whole crawl; duration_s is the sum of the sessions' running times and the rates are
  //  over it; "session" is this run's part.
  nlohmann::json ToJson() const;
  // A human-readable table for the end of a crawl.
  std::string SummaryTable() const;
};

class CrawlStats {
 public:
  // Duration is measured on `clock` from construction; it must outlive this object.
  explicit CrawlStats(const Clock* clock);

  // Continues the totals of the crawl's earlier sessions (restored from its checkpoint): their
  // counts and duration are added to this session's. Call before recording anything.
  void Resume(const CrawlStatsSnapshot& earlier);

  void RecordPage(const PageRecord& record);
  // A failed fetch that has no PageRecord (robots.txt), counted in `errors` under `kind`.
  void RecordError(std::string_view kind);
  void RecordRejection(std::string_view reason, uint64_t count = 1);
  // A sitemap counter ("fetched", "urls", ...: docs/features/sitemaps.md, "Sitemaps") grows by
  // `count`.
  void RecordSitemap(std::string_view counter, uint64_t count = 1);
  // A page the content-seen test could not answer for ("unknown" in duplicates).
  void RecordContentUnknown();
  // One batch of the seen stage: `asked` keys, of which `fresh` were told new.
  void RecordSeen(uint64_t asked, uint64_t fresh);
  CrawlStatsSnapshot Snapshot() const;

 private:
  const Clock* clock_;
  const Clock::TimePoint start_;
  mutable std::mutex mu_;
  CrawlStatsSnapshot totals_;   // guarded by mu_, earlier sessions included; duration_s unused
  CrawlStatsSnapshot earlier_;  // guarded by mu_: what Resume() restored
};

// The class of an HTTP status as metrics and stats.json name it: "1xx" ... "5xx", "none" for no
// response (0), "other" for a code outside 100-599.
std::string StatusClassName(int status);

// Writes `json` to `path` atomically (a temporary file renamed over it), pretty-printed.
Status WriteJsonFile(const std::string& path, const nlohmann::json& json);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_METRICS_CRAWL_STATS_H_
