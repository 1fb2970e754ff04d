// The text form of a fetch record kept in Redis by a crawl cluster
// (crawler/state/fetch_record_text.h).
#include "crawler/state/fetch_record_text.h"

#include <gtest/gtest.h>

#include <string>

namespace urlsieve {
namespace {

FetchRecord Full() {
  FetchRecord r;
  r.url = "http://a.example/p?x=1";
  r.status = 200;
  r.etag = "\"abc def\"";
  r.last_modified = "Tue, 01 Dec 2026 10:00:00 GMT";
  r.payload_digest = "sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  r.fetch_time = 1795000000;
  r.interval_s = 3600;
  r.depth = 3;
  r.parent = "http://a.example/";
  r.warc.record_id = "<urn:uuid:6e0f3d2c-0000-4000-8000-000000000000>";
  r.warc.date = "2026-11-27T10:00:00Z";
  return r;
}

TEST(FetchRecordTextTest, ARecordReadsBackWhole) {
  const FetchRecord r = Full();
  const std::string text = EncodeFetchRecord(r);
  EXPECT_EQ(text.rfind("1795000000 3600 200 3\n", 0), 0u) << text;  // what the scan reads
  std::optional<FetchRecord> back = DecodeFetchRecord(r.url, text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->url, r.url);
  EXPECT_EQ(back->status, 200);
  EXPECT_EQ(back->etag, r.etag);
  EXPECT_EQ(back->last_modified, r.last_modified);
  EXPECT_EQ(back->payload_digest, r.payload_digest);
  EXPECT_EQ(back->fetch_time, r.fetch_time);
  EXPECT_EQ(back->interval_s, 3600);
  EXPECT_EQ(back->depth, 3u);
  EXPECT_EQ(back->parent, r.parent);
  EXPECT_EQ(back->warc.record_id, r.warc.record_id);
  EXPECT_EQ(back->warc.date, r.warc.date);
  EXPECT_EQ(back->warc.target_uri, r.url);
  EXPECT_EQ(back->warc.payload_digest, r.payload_digest);
}

// An exact duplicate's record refers to its first copy's capture (docs/features/content-seen.md,
// "In the crawl"): the target URI travels too, and only then.
TEST(FetchRecordTextTest, ARecordReferringToAnotherUrlsCaptureKeepsItsTarget) {
  FetchRecord r = Full();
  r.warc.target_uri = "http://a.example/first";
  const std::string text = EncodeFetchRecord(r);
  std::optional<FetchRecord> back = DecodeFetchRecord(r.url, text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->warc.target_uri, "http://a.example/first");
  EXPECT_EQ(back->warc.record_id, r.warc.record_id);
  r.warc.target_uri = r.url;
  EXPECT_EQ(EncodeFetchRecord(r), EncodeFetchRecord(Full()));
}

TEST(FetchRecordTextTest, EmptyFieldsStayEmpty) {
  FetchRecord r;
  r.url = "http://a.example/";
  r.status = 404;
  std::optional<FetchRecord> back = DecodeFetchRecord(r.url, EncodeFetchRecord(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->status, 404);
  EXPECT_TRUE(back->etag.empty());
  EXPECT_TRUE(back->warc.record_id.empty());
  EXPECT_TRUE(back->warc.target_uri.empty());
}

TEST(FetchRecordTextTest, AValidatorWithALineBreakIsNotStored) {
  FetchRecord r = Full();
  r.etag = "\"a\"\r\nX-Injected: 1";
  std::optional<FetchRecord> back = DecodeFetchRecord(r.url, EncodeFetchRecord(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->etag.empty());
  EXPECT_EQ(back->last_modified, r.last_modified);
}

TEST(FetchRecordTextTest, ForeignTextIsRefused) {
  for (const char* text : {"", "garbage", "1 2 3\n", "1 2 3 4", "1 2 3 4\na\nb\nc\nd\ne",
                           "1 2 3 4\na\nb\nc\nd\ne\nf\ng\nh", "1 2 3 4\na\nb\nc\nd\ne\nf\n",
                           "x 2 3 4\na\nb\nc\nd\ne\nf", "1 2 3 -4\na\nb\nc\nd\ne\nf"}) {
    EXPECT_FALSE(DecodeFetchRecord("http://a.example/", text).has_value()) << text;
  }
  EXPECT_TRUE(DecodeFetchRecord("http://a.example/", "1 2 3 4\na\nb\nc\nd\ne\nf").has_value());
}

}  // namespace
}  // namespace urlsieve
