// PageRecord: what the crawl reports about one fetch — one line of pages.jsonl.
//
// Field names are the JSONL schema (documented in ToJson). Thread-safety: a plain value.
#ifndef URLSIEVE_CRAWLER_OUTPUT_PAGE_RECORD_H_
#define URLSIEVE_CRAWLER_OUTPUT_PAGE_RECORD_H_

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace urlsieve {

struct PageRecord {
  std::string url;           // the URL as queued
  std::string final_url;     // after redirects followed by the fetcher; empty = same as url
  int status = 0;            // HTTP status; 0 when no response arrived
  std::string content_type;  // empty when unknown -> null
  uint64_t bytes = 0;        // body bytes received (after decoding)
  int depth = 0;
  std::string parent;                          // the page that linked here; empty for seeds -> null
  double fetch_ms = 0;                         // request start to last body byte
  std::chrono::system_clock::time_point time;  // when the fetch started
  int links_found = 0;                         // links extracted and in scope
  int links_new = 0;                           // of those, how many the seen stage accepted as new
  std::optional<std::string> error;            // "timeout: ...", "dns: ..."; nullopt = success
  bool noindex = false;                        // <meta name=robots content=noindex|none>
  std::optional<std::string> canonical;        // <link rel=canonical href>, resolved
  // A re-fetch of a re-crawl (docs/features/recrawl.md, "Re-crawl"): what it found against the
  // URL's fetch record, RefetchResultName: "not_modified" (a 304), "unchanged" (the same status and
  // payload digest), "changed"; nullopt for a first fetch.
  std::optional<std::string> refetch;
  // The encoding the body was decoded from (TextEncoding::name, docs/features/encodings.md,
  // "Character encodings") for an HTML page that was parsed; empty otherwise -> absent.
  std::string encoding;
  // The content-seen test (docs/features/content-seen.md, "In the crawl"): the URL of the first
  // page the crawl fetched with the same payload digest (an exact duplicate), or else of the first
  // whose visible text's SimHash is within the near distance, and that distance; empty = none.
  std::string duplicate_of;
  std::string near_duplicate_of;
  int distance = 0;
  // Fetched to check a learned URL rule (docs/features/dust.md): the rule's id; empty -> absent.
  std::string dust_check;
  // A body not kept whole for its type or size (docs/features/content-seen.md, "Non-HTML
  // bodies"): "skipped" (a type that is not parsed, not downloaded: a crawl without --warc),
  // "truncated" (only its first bytes kept: --warc-non-html truncate, or past --max-body-bytes);
  // empty: kept whole -> absent.
  std::string body;
};

// {"url", "final_url", "status", "content_type", "bytes", "depth", "parent", "fetch_ms", "time",
//  "links_found", "links_new", "error"} always, "noindex": true and "canonical" only when present,
// "encoding" ("UTF-8", "GBK", ...) for an HTML page that was parsed, "body": "skipped" |
// "truncated" for a body not kept whole (a type that is not parsed and not downloaded; only its
// first bytes kept).
// A re-fetch (--recrawl) adds "refetch": "not_modified" | "unchanged" | "changed", and a 304
// also "not_modified": true (its "status" is 304, "bytes" 0, and its links are not extracted again:
// "links_found" and "links_new" are 0, as for an "unchanged" page).
// The content-seen test adds "duplicate_of": URL for an exact duplicate, or "near_duplicate_of":
// URL and "distance": 0..7 for a near duplicate. "time" is ISO 8601 UTC with milliseconds; absent
// values are null.
nlohmann::json ToJson(const PageRecord& record);

// "2026-11-21T22:30:06.123Z"; with_millis=false gives "2026-11-21T22:30:06Z" (WARC-Date).
std::string FormatUtc(std::chrono::system_clock::time_point t, bool with_millis);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_OUTPUT_PAGE_RECORD_H_
