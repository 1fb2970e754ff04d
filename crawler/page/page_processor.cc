#include "crawler/page/page_processor.h"

#include "crawler/page/link_extractor.h"
#include "crawler/page/page_decoder.h"
#include "dedup/content/simhash.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

bool IsRedirectStatus(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

std::string_view WarcTruncation(const FetchResult& r) {
  if (r.body_truncated || r.body_skipped || r.error_kind == FetchErrorKind::kBodyTooLarge) {
    return "length";
  }
  if (r.ok()) return {};
  return r.error_kind == FetchErrorKind::kTimeout ? "time" : "unspecified";
}

std::string_view BodyNote(const FetchResult& r) {
  if (r.body_skipped) return r.body.empty() ? "skipped" : "truncated";
  if (r.body_truncated || r.error_kind == FetchErrorKind::kBodyTooLarge) return "truncated";
  return {};
}

std::optional<RejectReason> PermanentFailure(const FetchResult& r) {
  if (!r.ok() && IsPermanent(r.error_kind)) return RejectReason::kTlsError;
  return std::nullopt;
}

PageProcessor::PageProcessor(const UrlCanonicalizer* fetch_form, const LinkExtractor* extractor,
                             const TextEncoding* default_encoding, const RecrawlSchedule* schedule)
    : fetch_form_(fetch_form),
      extractor_(extractor),
      default_encoding_(default_encoding),
      schedule_(schedule) {}

ProcessedPage PageProcessor::Process(const Lease& lease, const FetchResult& r,
                                     const std::optional<FetchRecord>& known,
                                     std::chrono::system_clock::time_point time) const {
  ProcessedPage page;
  PageRecord& record = page.record;
  record.time = time;
  record.url = lease.url;
  record.status = static_cast<int>(r.status);
  record.content_type = r.content_type;
  record.bytes = r.body.size();
  record.depth = static_cast<int>(lease.depth);
  record.parent = lease.parent;
  record.fetch_ms = std::chrono::duration<double, std::milli>(r.total_time).count();
  if (!r.ok()) record.error = r.error.message();  // "<kind>: <detail>", built by the fetcher
  record.body = BodyNote(r);

  page.answered = r.ok() && r.status != 0;
  if (page.answered && r.status != 304) page.digest = WarcSha1Digest(r.body);
  if (known && page.answered) {
    page.refetch = RecrawlSchedule::Compare(*known, static_cast<int>(r.status), page.digest);
    record.refetch = std::string(RefetchResultName(*page.refetch));
  }
  const bool same_payload = page.refetch && *page.refetch != RefetchResult::kChanged;

  if (same_payload) {
    // Not modified or unchanged: its links were queued when it was first fetched.
  } else if (r.ok() && IsRedirectStatus(r.status) && !r.location.empty()) {
    // docs/architecture.md, "Data flow": a redirect target is a link of the page that redirected.
    Result<std::string> target = fetch_form_->Resolve(lease.url, r.location);
    if (target.ok()) {
      page.links.push_back(std::move(*target));
    } else {
      record.error = "redirect: " + target.status().message();
    }
  } else if (r.ok() && r.status >= 200 && r.status < 300 && r.content_type_accepted &&
             !r.body_skipped) {
    ExtractLinks(lease, r, &page);
  }

  // A response that arrived counts, even if its body was cut at the cap; a transfer that failed
  // before one arrived (0) is retried by the frontier within its budget.
  const bool responded = r.ok() || r.error_kind == FetchErrorKind::kBodyTooLarge;
  page.outcome.http_status = responded ? static_cast<int>(r.status) : 0;
  page.outcome.fetch_time = r.total_time;
  page.outcome.retry_after = r.retry_after;
  page.outcome.permanent_failure = PermanentFailure(r);

  if (r.status != 0) {
    // A 304 is a revisit (referring to the original when this WARC holds it); a 2xx with the
    // recorded payload is one when the original is archived, else it is archived in full.
    const bool has_original = known && !known->warc.record_id.empty();
    if (page.refetch == RefetchResult::kNotModified) {
      page.archive = PageArchive::kNotModifiedRevisit;
    } else if (page.refetch == RefetchResult::kUnchanged && r.status >= 200 && r.status < 300 &&
               has_original) {
      page.archive = PageArchive::kIdenticalRevisit;
    } else {
      page.archive = PageArchive::kExchange;
    }
  }
  return page;
}

void PageProcessor::ExtractLinks(const Lease& lease, const FetchResult& r,
                                 ProcessedPage* page) const {
  // docs/features/encodings.md: the page is read in its encoding (BOM, HTTP charset, <meta>
  // prescan, default), as UTF-8; its links' queries are encoded in it.
  DecodeLimits limits;  // at most 3 bytes per byte: a bound the decoder never reaches
  limits.max_output_bytes = 3 * r.body.size() + 16;
  Result<DecodedPage> decoded =
      DecodedPage::Decode(r.body, r.content_type, *default_encoding_, limits);
  PageLinks links;
  if (decoded.ok()) {
    page->record.encoding = std::string(decoded->encoding().name);
    if (decoded->truncated())
      page->record.error = "decode: the decoded page was cut at 3x its size";
    links = extractor_->Extract(decoded->html(), lease.url, &decoded->encoding());
  } else {
    page->record.error = "decode: " + decoded.status().message();  // read as UTF-8, as gumbo does
    links = extractor_->Extract(r.body, lease.url);
  }
  page->links.reserve(links.links.size());
  for (ExtractedLink& link : links.links) page->links.push_back(std::move(link.url));
  // A text without a word has no near fingerprint (SimHash 0): pages of images only are not
  // near duplicates of each other.
  if (extractor_->options().collect_text) {
    const uint64_t simhash = SimHash(links.text);
    if (simhash != 0) page->simhash = simhash;
  }
  page->record.noindex = links.noindex;
  page->record.canonical = links.canonical;
  page->dropped = links.DroppedCounts();
}

WarcExchange PageProcessor::Exchange(const Lease& lease, const FetchResult& r,
                                     const ProcessedPage& page) {
  return WarcExchange{lease.url,
                      r.primary_ip,
                      page.record.time,
                      r.request_headers,
                      r.response_headers,
                      r.body,
                      !r.content_encoding.empty(),
                      WarcTruncation(r),
                      page.digest,
                      page.response_id};
}

WarcRevisit PageProcessor::Revisit(const Lease& lease, const FetchResult& r,
                                   const ProcessedPage& page,
                                   const std::optional<FetchRecord>& known) {
  WarcRevisit revisit;
  revisit.profile = page.archive == PageArchive::kNotModifiedRevisit
                        ? WarcRevisit::Profile::kServerNotModified
                        : WarcRevisit::Profile::kIdenticalPayloadDigest;
  revisit.target_uri = lease.url;
  revisit.ip_address = r.primary_ip;
  revisit.date = page.record.time;
  revisit.request = r.request_headers;
  revisit.response_head = r.response_headers;
  // The head's Content-Encoding no longer describes the stored (decoded) payload.
  revisit.payload_decoded = !r.content_encoding.empty();
  if (page.archive == PageArchive::kDuplicateRevisit) {
    revisit.refers_to = &page.first_copy;
  } else {
    revisit.refers_to = known && !known->warc.record_id.empty() ? &known->warc : nullptr;
  }
  return revisit;
}

FetchRecord PageProcessor::UpdatedRecord(const std::optional<FetchRecord>& known,
                                         const Lease& lease, const FetchResult& r,
                                         const ProcessedPage& page,
                                         std::optional<WarcRecordRef> archived) const {
  const std::optional<RefetchResult>& refetch = page.refetch;
  const bool not_modified = refetch == RefetchResult::kNotModified;
  FetchRecord next;
  if (known) next = *known;
  next.url = lease.url;
  next.depth = lease.depth;
  next.parent = lease.parent;
  next.fetch_time =
      std::chrono::duration_cast<std::chrono::seconds>(page.record.time.time_since_epoch()).count();
  // A 304 may repeat or update the validators (RFC 9110 §15.4.5); it keeps the rest.
  if (!not_modified || !r.etag.empty()) next.etag = r.etag;
  if (!not_modified || !r.last_modified.empty()) next.last_modified = r.last_modified;
  if (!not_modified) {
    next.status = static_cast<int>(r.status);
    next.payload_digest = page.digest;
  }
  if (archived) {
    next.warc = std::move(*archived);
  } else if (!refetch || *refetch == RefetchResult::kChanged) {
    next.warc = WarcRecordRef{};  // a new payload not archived (no --warc): nothing to refer to
  }
  next.interval_s =
      refetch ? schedule_->NextInterval(known->interval_s, *refetch) : schedule_->InitialInterval();
  return next;
}

}  // namespace urlsieve
