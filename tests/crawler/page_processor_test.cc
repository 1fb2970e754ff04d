// PageProcessor: what one fetched page means for the crawl, decided without threads, sockets or
// files — fetch results are built by hand (docs/architecture.md, "The seams").
#include "crawler/page/page_processor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

#include "base/encoding/text_encoding.h"
#include "crawler/page/link_extractor.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

using std::chrono::system_clock;

class PageProcessorTest : public ::testing::Test {
 protected:
  PageProcessorTest()
      : fetch_form_(CanonicalizeOptions{}),
        extractor_(&fetch_form_, LinkExtractor::Options{}),
        schedule_(RecrawlScheduleOptions{}),
        processor_(&fetch_form_, &extractor_, EncodingForLabel("windows-1252"), &schedule_) {
    lease_.url = "http://127.0.0.1/a/page.html";
    lease_.depth = 2;
    lease_.parent = "http://127.0.0.1/";
  }

  static FetchResult Html(std::string body, std::string content_type = "text/html") {
    FetchResult r;
    r.url = "http://127.0.0.1/a/page.html";
    r.primary_ip = "127.0.0.1";
    r.status = 200;
    r.content_type = std::move(content_type);
    r.content_type_accepted = true;
    r.body = std::move(body);
    r.request_headers = "GET /a/page.html HTTP/1.1\r\n\r\n";
    r.response_headers = "HTTP/1.1 200 OK\r\n\r\n";
    return r;
  }

  ProcessedPage Process(const FetchResult& r, const std::optional<FetchRecord>& known = {}) {
    return processor_.Process(lease_, r, known, time_);
  }

  // The record a first fetch of `r` leaves, archived as `record_id` ("" = not archived).
  FetchRecord FirstRecord(const FetchResult& r, const std::string& record_id) {
    const ProcessedPage page = Process(r);
    std::optional<WarcRecordRef> archived;
    if (!record_id.empty()) archived = WarcRecordRef{record_id, lease_.url, "2026-01-01", ""};
    return processor_.UpdatedRecord(std::nullopt, lease_, r, page, archived);
  }

  UrlCanonicalizer fetch_form_;
  LinkExtractor extractor_;
  RecrawlSchedule schedule_;
  PageProcessor processor_;
  Lease lease_;
  system_clock::time_point time_ = system_clock::time_point(std::chrono::seconds(1'800'000'000));
};

TEST_F(PageProcessorTest, HtmlPageGivesItsRecordLinksDigestAndAnExchange) {
  const FetchResult r = Html(
      "<html><head><meta name=robots content=noindex>"
      "<link rel=canonical href=/a/canon.html></head>"
      "<body><a href=b.html>b</a> <a href='/c?x=1'>c</a></body></html>");
  const ProcessedPage page = Process(r);
  EXPECT_EQ(page.record.url, lease_.url);
  EXPECT_EQ(page.record.status, 200);
  EXPECT_EQ(page.record.depth, 2);
  EXPECT_EQ(page.record.parent, lease_.parent);
  EXPECT_EQ(page.record.time, time_);
  EXPECT_EQ(page.record.bytes, r.body.size());
  EXPECT_TRUE(page.record.noindex);
  EXPECT_EQ(page.record.canonical, "http://127.0.0.1/a/canon.html");
  EXPECT_EQ(page.record.encoding, "windows-1252");  // no declaration: the default
  EXPECT_FALSE(page.record.error.has_value());
  EXPECT_FALSE(page.record.refetch.has_value());
  ASSERT_EQ(page.links.size(), 2u);
  EXPECT_EQ(page.links[0], "http://127.0.0.1/a/b.html");
  EXPECT_EQ(page.links[1], "http://127.0.0.1/c?x=1");
  EXPECT_TRUE(page.answered);
  EXPECT_EQ(page.digest, WarcSha1Digest(r.body));
  EXPECT_EQ(page.outcome.http_status, 200);
  EXPECT_FALSE(page.outcome.permanent_failure.has_value());
  EXPECT_EQ(page.archive, PageArchive::kExchange);

  const WarcExchange exchange = PageProcessor::Exchange(lease_, r, page);
  EXPECT_EQ(exchange.target_uri, lease_.url);
  EXPECT_EQ(exchange.payload, r.body);
  EXPECT_EQ(exchange.payload_digest, page.digest);
  EXPECT_EQ(exchange.date, time_);
}

TEST_F(PageProcessorTest, PageIsReadInItsDeclaredEncoding) {
  // "б" in windows-1251 is 0xE1; the link's query is sent in the page's encoding.
  const FetchResult r = Html("<a href='/q?w=\xE1'>x</a>", "text/html; charset=windows-1251");
  const ProcessedPage page = Process(r);
  EXPECT_EQ(page.record.encoding, "windows-1251");
  ASSERT_EQ(page.links.size(), 1u);
  EXPECT_EQ(page.links[0], "http://127.0.0.1/q?w=%E1");
}

TEST_F(PageProcessorTest, RedirectTargetIsTheOnlyLink) {
  FetchResult r = Html("<a href=/not-read>x</a>");
  r.status = 301;
  r.location = "../moved.html";
  const ProcessedPage page = Process(r);
  ASSERT_EQ(page.links.size(), 1u);
  EXPECT_EQ(page.links[0], "http://127.0.0.1/moved.html");
  EXPECT_EQ(page.outcome.http_status, 301);
  EXPECT_EQ(page.archive, PageArchive::kExchange);
}

TEST_F(PageProcessorTest, UnresolvableRedirectIsRecordedAsAnError) {
  FetchResult r = Html("");
  r.status = 302;
  r.location = "/" + std::string(100'000, 'x');  // longer than any URL the crawl keeps
  const ProcessedPage page = Process(r);
  EXPECT_TRUE(page.links.empty());
  ASSERT_TRUE(page.record.error.has_value());
  EXPECT_EQ(page.record.error->rfind("redirect: ", 0), 0u) << *page.record.error;
}

TEST_F(PageProcessorTest, BodyNotDownloadedOrNotHtmlGivesNoLinks) {
  FetchResult skipped = Html("<a href=/x>x</a>");
  skipped.content_type_accepted = false;
  skipped.body_skipped = true;
  EXPECT_TRUE(Process(skipped).links.empty());
  FetchResult error_page = Html("<a href=/x>x</a>");
  error_page.status = 404;
  const ProcessedPage page = Process(error_page);
  EXPECT_TRUE(page.links.empty());
  EXPECT_EQ(page.outcome.http_status, 404);
  EXPECT_TRUE(page.answered);
}

// docs/features/content-seen.md, "Non-HTML bodies": pages.jsonl and the WARC record say when the
// body kept is not the whole body, and why.
TEST_F(PageProcessorTest, BodyNotKeptWholeIsNotedAndArchivedAsTruncated) {
  FetchResult skipped = Html("", "application/pdf");
  skipped.content_type_accepted = false;
  skipped.body_skipped = true;
  ProcessedPage page = Process(skipped);
  EXPECT_EQ(page.record.body, "skipped");
  EXPECT_EQ(page.archive, PageArchive::kExchange);
  EXPECT_EQ(PageProcessor::Exchange(lease_, skipped, page).truncated, "length");

  FetchResult first = Html("%PDF-1.4", "application/pdf");  // its first bytes kept
  first.content_type_accepted = false;
  first.body_skipped = true;
  page = Process(first);
  EXPECT_EQ(page.record.body, "truncated");
  EXPECT_EQ(page.record.bytes, 8u);
  EXPECT_TRUE(page.links.empty());
  EXPECT_EQ(PageProcessor::Exchange(lease_, first, page).truncated, "length");

  FetchResult whole = Html("body { color: red }", "text/css");  // downloaded, never parsed
  whole.content_type_accepted = false;
  page = Process(whole);
  EXPECT_EQ(page.record.body, "");
  EXPECT_TRUE(page.links.empty());
  EXPECT_EQ(PageProcessor::Exchange(lease_, whole, page).truncated, "");

  FetchResult cut = Html("<a href=/x>");
  cut.error = Status::Unavailable("body too large: more than 11 bytes after decoding");
  cut.error_kind = FetchErrorKind::kBodyTooLarge;
  page = Process(cut);
  EXPECT_EQ(page.record.body, "truncated");
  EXPECT_EQ(PageProcessor::Exchange(lease_, cut, page).truncated, "length");

  FetchResult slow = Html("<a href=/x>");
  slow.error = Status::Unavailable("timeout: Operation timed out");
  slow.error_kind = FetchErrorKind::kTimeout;
  EXPECT_EQ(WarcTruncation(slow), "time");
  slow.error_kind = FetchErrorKind::kNetwork;
  EXPECT_EQ(WarcTruncation(slow), "unspecified");
}

TEST_F(PageProcessorTest, TransferFailureIsNoAnswerAndIsRetried) {
  FetchResult r;
  r.url = lease_.url;
  r.error = Status::Unavailable("timeout: Operation timed out");
  r.error_kind = FetchErrorKind::kTimeout;
  const ProcessedPage page = Process(r);
  EXPECT_FALSE(page.answered);
  EXPECT_EQ(page.record.error, "timeout: Operation timed out");
  EXPECT_EQ(page.outcome.http_status, 0);
  EXPECT_FALSE(page.outcome.permanent_failure.has_value());
  EXPECT_EQ(page.archive, PageArchive::kNone);
  EXPECT_TRUE(page.digest.empty());
}

TEST_F(PageProcessorTest, RefusedCertificateIsPermanent) {
  FetchResult r;
  r.error = Status::Unavailable("tls: certificate");
  r.error_kind = FetchErrorKind::kTls;
  EXPECT_EQ(Process(r).outcome.permanent_failure, RejectReason::kTlsError);
}

TEST_F(PageProcessorTest, BodyPastTheCapCountsAsAResponse) {
  FetchResult r = Html("partial");
  r.error = Status::Unavailable("body_too_large: cut");
  r.error_kind = FetchErrorKind::kBodyTooLarge;
  const ProcessedPage page = Process(r);
  EXPECT_EQ(page.outcome.http_status, 200);  // a response arrived: not retried as a failure
  EXPECT_FALSE(page.answered);               // but nothing to record in the fetch record
  EXPECT_TRUE(page.links.empty());
}

TEST_F(PageProcessorTest, FirstFetchRecordHasTheInitialIntervalAndTheArchivedRecord) {
  FetchResult r = Html("<p>x</p>");
  r.etag = "\"v1\"";
  r.last_modified = "Mon, 02 Mar 2026 10:00:00 GMT";
  const FetchRecord record = FirstRecord(r, "<urn:uuid:1>");
  EXPECT_EQ(record.url, lease_.url);
  EXPECT_EQ(record.status, 200);
  EXPECT_EQ(record.etag, "\"v1\"");
  EXPECT_EQ(record.last_modified, r.last_modified);
  EXPECT_EQ(record.payload_digest, WarcSha1Digest(r.body));
  EXPECT_EQ(record.fetch_time, 1'800'000'000);
  EXPECT_EQ(record.interval_s, schedule_.InitialInterval());
  EXPECT_EQ(record.depth, 2u);
  EXPECT_EQ(record.parent, lease_.parent);
  EXPECT_EQ(record.warc.record_id, "<urn:uuid:1>");
}

TEST_F(PageProcessorTest, NotModifiedIsARevisitThatKeepsTheRecord) {
  const FetchResult first = Html("<a href=/x>x</a>");
  const std::optional<FetchRecord> known = FirstRecord(first, "<urn:uuid:1>");
  FetchResult r = Html("");
  r.status = 304;
  r.etag = "\"v2\"";  // a 304 may update the validators (RFC 9110 §15.4.5)
  const ProcessedPage page = Process(r, known);
  EXPECT_EQ(page.refetch, RefetchResult::kNotModified);
  EXPECT_EQ(page.record.refetch, "not_modified");
  EXPECT_TRUE(page.links.empty());  // queued when it was first fetched
  EXPECT_TRUE(page.digest.empty());
  EXPECT_EQ(page.archive, PageArchive::kNotModifiedRevisit);
  const WarcRevisit revisit = PageProcessor::Revisit(lease_, r, page, known);
  EXPECT_EQ(revisit.profile, WarcRevisit::Profile::kServerNotModified);
  ASSERT_NE(revisit.refers_to, nullptr);
  EXPECT_EQ(revisit.refers_to->record_id, "<urn:uuid:1>");

  const FetchRecord next = processor_.UpdatedRecord(known, lease_, r, page, std::nullopt);
  EXPECT_EQ(next.status, 200);  // the original's
  EXPECT_EQ(next.payload_digest, known->payload_digest);
  EXPECT_EQ(next.etag, "\"v2\"");
  EXPECT_EQ(next.warc.record_id, "<urn:uuid:1>");
  EXPECT_EQ(next.interval_s,
            schedule_.NextInterval(known->interval_s, RefetchResult::kNotModified));
}

TEST_F(PageProcessorTest, UnchangedPayloadIsARevisitOnlyWhenTheOriginalIsArchived) {
  const FetchResult r = Html("<a href=/x>x</a>");
  const ProcessedPage archived = Process(r, FirstRecord(r, "<urn:uuid:1>"));
  EXPECT_EQ(archived.refetch, RefetchResult::kUnchanged);
  EXPECT_EQ(archived.archive, PageArchive::kIdenticalRevisit);
  EXPECT_TRUE(archived.links.empty());
  const ProcessedPage not_archived = Process(r, FirstRecord(r, ""));
  EXPECT_EQ(not_archived.refetch, RefetchResult::kUnchanged);
  EXPECT_EQ(not_archived.archive, PageArchive::kExchange);
}

TEST_F(PageProcessorTest, ChangedPageHasItsLinksExtractedAgain) {
  const FetchRecord known = FirstRecord(Html("<p>old</p>"), "<urn:uuid:1>");
  const FetchResult r = Html("<a href=/new>new</a>");
  const ProcessedPage page = Process(r, known);
  EXPECT_EQ(page.refetch, RefetchResult::kChanged);
  EXPECT_EQ(page.record.refetch, "changed");
  ASSERT_EQ(page.links.size(), 1u);
  EXPECT_EQ(page.archive, PageArchive::kExchange);
  // Not archived this time (no --warc): the record no longer refers to the old payload.
  const FetchRecord next = processor_.UpdatedRecord(known, lease_, r, page, std::nullopt);
  EXPECT_TRUE(next.warc.record_id.empty());
  EXPECT_EQ(next.payload_digest, WarcSha1Digest(r.body));
}

}  // namespace
}  // namespace urlsieve
