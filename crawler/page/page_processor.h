// PageProcessor: what one fetched page means for the crawl (docs/architecture.md, "The seams").
//
// Given a lease, the fetch result and the URL's fetch record from an earlier pass (a re-fetch of a
// re-crawl), Process() decides, without touching anything: the page's record (pages.jsonl), the
// links to admit (a redirect's target is a link of the page that redirected), the outcome the
// frontier is told, the payload digest (computed once: the fetch record keeps it and the WARC
// writer takes it) and what the WARC holds for it — the exchange in full, or a revisit when a
// re-fetch found the page not modified (a 304) or unchanged (the recorded payload digest, when
// the original is archived). UpdatedRecord() is the URL's fetch record after the page is recorded.
//
// The decoding (docs/features/encodings.md) and the link extraction happen here: the page is read
// in its encoding (BOM, HTTP charset, <meta> prescan, default) and its links' queries are encoded
// in it.
//
// Pure: no thread, socket or file; the recorder (the crawl loop) writes what it decided.
// Thread-safety: const methods over immutable parts; call from any number of threads.
#ifndef URLSIEVE_CRAWLER_PAGE_PAGE_PROCESSOR_H_
#define URLSIEVE_CRAWLER_PAGE_PAGE_PROCESSOR_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "crawler/fetch/fetcher.h"
#include "crawler/output/page_record.h"
#include "crawler/output/warc_writer.h"
#include "crawler/state/fetch_record.h"
#include "crawler/state/recrawl_schedule.h"
#include "frontier/frontier.h"

namespace urlsieve {

class LinkExtractor;
class UrlCanonicalizer;
struct TextEncoding;

// What the WARC holds for a page (when the crawl writes one).
enum class PageArchive : uint8_t {
  kNone,                // no response arrived
  kExchange,            // request + response in full
  kNotModifiedRevisit,  // a re-fetch answered 304 (server-not-modified)
  kIdenticalRevisit,    // a re-fetch with the recorded payload (identical-payload-digest)
  // An exact duplicate of another page's archived capture (identical-payload-digest, referring to
  // ProcessedPage::first_copy; docs/features/content-seen.md, "In the crawl").
  kDuplicateRevisit,
};

struct ProcessedPage {
  PageRecord record;               // links_found / links_new are the admission's, filled later
  std::vector<std::string> links;  // absolute URLs found on the page, or a redirect's target
  // Links the extractor dropped, by reason (CrawlStats::RecordRejection).
  std::vector<std::pair<std::string_view, uint64_t>> dropped;
  FetchOutcome outcome;  // for Frontier::Done
  // A response arrived (a status other than 0): it updates the URL's fetch record.
  bool answered = false;
  std::string digest;                    // the payload digest ("" for a 304 or no response)
  std::optional<RefetchResult> refetch;  // a re-fetch: what it found
  PageArchive archive = PageArchive::kNone;
  // The SimHash of the visible text of a decoded HTML page with words (the content-seen test's
  // near fingerprint; docs/features/content-seen.md, "Fingerprints"), when the extractor collects
  // text.
  std::optional<uint64_t> simhash;
  // Set by the content-seen test: the response record's id when it named it before the write
  // (WarcExchange::response_id), and for a kDuplicateRevisit the first copy's capture.
  std::string response_id;
  WarcRecordRef first_copy;
};

class PageProcessor {
 public:
  // Every part must outlive the processor.
  PageProcessor(const UrlCanonicalizer* fetch_form, const LinkExtractor* extractor,
                const TextEncoding* default_encoding, const RecrawlSchedule* schedule);

  // `known`: the URL's fetch record before this fetch (a re-fetch), else nullopt; `time`: when
  // the fetch started.
  ProcessedPage Process(const Lease& lease, const FetchResult& r,
                        const std::optional<FetchRecord>& known,
                        std::chrono::system_clock::time_point time) const;

  // The WARC records of a page whose archive is kExchange, resp. one of the revisits; they refer
  // to `r` and `known`, which must outlive them.
  static WarcExchange Exchange(const Lease& lease, const FetchResult& r, const ProcessedPage& page);
  static WarcRevisit Revisit(const Lease& lease, const FetchResult& r, const ProcessedPage& page,
                             const std::optional<FetchRecord>& known);
  // The revisit refers into `known`: a temporary (e.g. a FetchRecord converted to an optional at
  // the call) would leave it dangling.
  static WarcRevisit Revisit(const Lease& lease, const FetchResult& r, const ProcessedPage& page,
                             std::optional<FetchRecord>&& known) = delete;

  // The fetch record of lease.url after a page that answered; `archived`: the response record
  // the WARC holds for it (nullopt: none was written).
  FetchRecord UpdatedRecord(const std::optional<FetchRecord>& known, const Lease& lease,
                            const FetchResult& r, const ProcessedPage& page,
                            std::optional<WarcRecordRef> archived) const;

 private:
  // Fills page->links, encoding, noindex, canonical and dropped from an HTML body.
  void ExtractLinks(const Lease& lease, const FetchResult& r, ProcessedPage* page) const;

  const UrlCanonicalizer* const fetch_form_;
  const LinkExtractor* const extractor_;
  const TextEncoding* const default_encoding_;
  const RecrawlSchedule* const schedule_;
};

bool IsRedirectStatus(long status);

// Why the body a fetch kept is not the whole body, as a WARC-Truncated value: "length" (cut at
// the cap, or only its first bytes kept: docs/features/content-seen.md, "Non-HTML bodies"),
// "time" (a timeout mid-body), "unspecified" (the transfer failed otherwise after the response
// began); empty: the body is whole.
std::string_view WarcTruncation(const FetchResult& r);

// What pages.jsonl says of a body that was not kept whole for its size or type (PageRecord::body):
// "skipped" (not downloaded), "truncated" (its first bytes kept), "" otherwise.
std::string_view BodyNote(const FetchResult& r);

// A permanent transfer failure (a certificate refused) is not retried: its origin is given up.
std::optional<RejectReason> PermanentFailure(const FetchResult& r);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_PAGE_PAGE_PROCESSOR_H_
