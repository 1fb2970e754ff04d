// WarcReader on WARCs written by WarcWriter and on hand-made ones: plain, gzip'd per record and as
// one stream, chunked and content-coded payloads, WARC 1.0 folding, a cut payload, and damage
// (truncated, garbage) reported with the file and the offset after the records before it.
#include "crawler/output/warc_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "crawler/output/warc_writer.h"
#include "dedup/content/content_seen_set.h"
#include "tests/support/file_contents.h"
#include "tests/support/gzip.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::Gzip;
using testing::ReadFile;
using testing::ScratchDir;
using testing::WriteFile;

// Every record of the file, and how the reading ended.
struct ReadAll {
  ReadAll(const std::string& path, WarcReaderOptions options = {}) {
    if (!options.keep_payload) options.keep_payload = [](const WarcReadRecord&) { return true; };
    Result<std::unique_ptr<WarcReader>> reader = WarcReader::Open(path, options);
    if (!reader.ok()) {
      end = reader.status();
      return;
    }
    gzipped = (*reader)->gzipped();
    for (;;) {
      WarcReadRecord r;
      Result<bool> more = (*reader)->Next(&r);
      if (!more.ok()) {
        end = more.status();
        return;
      }
      if (!*more) return;
      records.push_back(std::move(r));
    }
  }
  std::vector<WarcReadRecord> records;
  Status end;
  bool gzipped = false;
};

std::string Record(std::string_view version,
                   const std::vector<std::pair<std::string, std::string>>& fields,
                   std::string_view block) {
  std::string s = std::string(version) + "\r\n";
  for (const auto& [name, value] : fields) s += name + ": " + value + "\r\n";
  s += "Content-Length: " + std::to_string(block.size()) + "\r\n\r\n";
  s += block;
  s += "\r\n\r\n";
  return s;
}

std::string Response(std::string_view uri, std::string_view id, std::string_view http) {
  return Record("WARC/1.0",
                {{"WARC-Type", "response"},
                 {"WARC-Target-URI", std::string(uri)},
                 {"WARC-Date", "2024-01-02T03:04:05Z"},
                 {"WARC-Record-ID", std::string(id)},
                 {"Content-Type", "application/http; msgtype=response"}},
                http);
}

// The first 64 bits of the SHA-1 the reader computed, as DigestFromWarcPayloadDigest reads them.
uint64_t First64(const std::array<uint8_t, 20>& sha1) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | sha1[static_cast<size_t>(i)];
  return v;
}

std::string Inflate(std::string_view data) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[4096];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  } while (rc == Z_OK);
  inflateEnd(&zs);
  return out;
}

using testing::Deflate;

class WarcReaderTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return (dir_.path() / name).string(); }
  ScratchDir dir_{"warc_reader"};
};

TEST_F(WarcReaderTest, ReadsWhatWarcWriterWrites) {
  const std::string path = Path("crawl.warc.gz");
  WarcRecordRef first;
  {
    auto writer = WarcWriter::Open(path, {});
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    WarcExchange ex;
    ex.target_uri = "http://127.0.0.1/a";
    ex.date = std::chrono::system_clock::now();
    ex.request = "GET /a HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ex.response_head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nTransfer-Encoding: "
        "chunked\r\nContent-Encoding: gzip\r\n\r\n";
    ex.payload = "<p>hello</p>";
    ex.payload_decoded = true;
    ASSERT_TRUE((*writer)->WriteExchange(ex, &first).ok());
    WarcRevisit rv;
    rv.profile = WarcRevisit::Profile::kIdenticalPayloadDigest;
    rv.target_uri = "http://127.0.0.1/b";
    rv.date = ex.date;
    rv.request = "GET /b HTTP/1.1\r\n\r\n";
    rv.response_head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
    rv.refers_to = &first;
    ASSERT_TRUE((*writer)->WriteRevisit(rv).ok());
    ASSERT_TRUE((*writer)->Sync().ok());
  }
  ReadAll all(path);
  ASSERT_TRUE(all.end.ok()) << all.end.message();
  EXPECT_TRUE(all.gzipped);
  ASSERT_EQ(all.records.size(), 5u);  // warcinfo, request, response, request, revisit
  EXPECT_EQ(all.records[0].type, "warcinfo");
  const WarcReadRecord& response = all.records[2];
  EXPECT_EQ(response.version, "WARC/1.1");
  EXPECT_EQ(response.type, "response");
  EXPECT_EQ(response.target_uri, "http://127.0.0.1/a");
  EXPECT_EQ(response.record_id, first.record_id);
  EXPECT_EQ(response.date, first.date);
  EXPECT_EQ(response.payload_digest, first.payload_digest);
  EXPECT_TRUE(response.http);
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.http_content_type, "text/html; charset=utf-8");
  // The writer renamed the stale codings (X-Crawler-...): the payload is taken as stored.
  EXPECT_FALSE(response.chunked);
  EXPECT_EQ(response.http_content_encoding, "");
  EXPECT_EQ(response.payload, "<p>hello</p>");
  EXPECT_TRUE(response.payload_complete);
  EXPECT_FALSE(response.payload_sha1.has_value());  // its sha1 WARC-Payload-Digest will do
  const WarcReadRecord& revisit = all.records[4];
  EXPECT_EQ(revisit.type, "revisit");
  EXPECT_EQ(revisit.refers_to, first.record_id);
  EXPECT_EQ(revisit.payload_digest, first.payload_digest);
  EXPECT_TRUE(revisit.http);
  EXPECT_FALSE(revisit.payload_kept);
  // One member per record: each offset is a member's, where inflating gives that record.
  const std::string file = ReadFile(path);
  uint64_t last = 0;
  for (size_t i = 0; i < all.records.size(); ++i) {
    EXPECT_EQ(all.records[i].offset_in_member, 0u);
    if (i > 0) {
      EXPECT_GT(all.records[i].offset, last);
    }
    last = all.records[i].offset;
    std::string text = Inflate(std::string_view(file).substr(all.records[i].offset));
    EXPECT_NE(text.find("WARC-Record-ID: " + all.records[i].record_id), std::string::npos) << i;
  }
}

// The same records plain, gzip'd per record, and gzip'd as one stream.
class WarcReaderFormsTest : public WarcReaderTest {
 protected:
  void SetUp() override {
    records_ = {
        Record("WARC/1.0", {{"WARC-Type", "warcinfo"}, {"WARC-Record-ID", "<urn:uuid:0>"}},
               "software: hand\r\n"),
        Response("http://x/a", "<urn:uuid:1>",
                 "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>a</p>"),
        Response("http://x/b", "<urn:uuid:2>",
                 "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\n\r\nnope"),
    };
  }
  std::vector<std::string> records_;
};

TEST_F(WarcReaderFormsTest, PlainPerRecordAndOneStreamReadAlike) {
  std::string plain, members;
  std::vector<uint64_t> plain_offsets, member_offsets;
  for (const std::string& r : records_) {
    plain_offsets.push_back(plain.size());
    member_offsets.push_back(members.size());
    plain += r;
    members += Gzip(r);
  }
  WriteFile(Path("a.warc"), plain);
  WriteFile(Path("a.warc.gz"), members);
  WriteFile(Path("one.warc.gz"), Gzip(plain));
  ReadAll p(Path("a.warc")), m(Path("a.warc.gz")), one(Path("one.warc.gz"));
  for (ReadAll* all : {&p, &m, &one}) {
    ASSERT_TRUE(all->end.ok()) << all->end.message();
    ASSERT_EQ(all->records.size(), 3u);
    EXPECT_EQ(all->records[1].target_uri, "http://x/a");
    EXPECT_EQ(all->records[1].payload, "<p>a</p>");
    EXPECT_EQ(all->records[1].status, 200);
    EXPECT_EQ(all->records[2].status, 404);
    EXPECT_EQ(all->records[2].payload, "nope");
    ASSERT_TRUE(all->records[1].payload_sha1.has_value());  // no digest in the record
    EXPECT_EQ(First64(*all->records[1].payload_sha1),
              *DigestFromWarcPayloadDigest(WarcSha1Digest("<p>a</p>")));
  }
  EXPECT_FALSE(p.gzipped);
  EXPECT_TRUE(m.gzipped);
  EXPECT_TRUE(one.gzipped);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(p.records[i].offset, plain_offsets[i]);
    EXPECT_EQ(p.records[i].offset_in_member, 0u);
    EXPECT_EQ(m.records[i].offset, member_offsets[i]);
    EXPECT_EQ(m.records[i].offset_in_member, 0u);
    EXPECT_EQ(one.records[i].offset, 0u);  // one member: where in it
    EXPECT_EQ(one.records[i].offset_in_member, plain_offsets[i]);
  }
}

TEST_F(WarcReaderFormsTest, TruncatedGzipReportsTheMemberAfterTheRecordsBefore) {
  std::string members;
  uint64_t last_member = 0;
  for (const std::string& r : records_) {
    last_member = members.size();
    members += Gzip(r);
  }
  WriteFile(Path("cut.warc.gz"), members.substr(0, members.size() - 40));
  ReadAll all(Path("cut.warc.gz"));
  EXPECT_EQ(all.records.size(), 2u);
  ASSERT_FALSE(all.end.ok());
  EXPECT_EQ(all.end.code(), StatusCode::kCorruption);
  EXPECT_NE(all.end.message().find(Path("cut.warc.gz")), std::string::npos) << all.end.message();
  EXPECT_NE(all.end.message().find("gzip member at offset " + std::to_string(last_member)),
            std::string::npos)
      << all.end.message();
  EXPECT_NE(all.end.message().find("truncated"), std::string::npos) << all.end.message();
}

TEST_F(WarcReaderFormsTest, TruncatedPlainBlockIsReported) {
  std::string plain = records_[0] + records_[1];
  const uint64_t second = records_[0].size();
  WriteFile(Path("cut.warc"), plain.substr(0, plain.size() - 8));
  ReadAll all(Path("cut.warc"));
  EXPECT_EQ(all.records.size(), 1u);
  ASSERT_FALSE(all.end.ok());
  EXPECT_NE(all.end.message().find("record at offset " + std::to_string(second)), std::string::npos)
      << all.end.message();
  EXPECT_NE(all.end.message().find("truncated"), std::string::npos) << all.end.message();
}

TEST_F(WarcReaderFormsTest, TruncatedOneStreamIsReported) {
  std::string plain;
  for (const std::string& r : records_) plain += r;
  const std::string gz = Gzip(plain);
  WriteFile(Path("cut.warc.gz"), gz.substr(0, gz.size() - 9));  // the gzip trailer is 8 bytes
  ReadAll all(Path("cut.warc.gz"));
  ASSERT_FALSE(all.end.ok());
  EXPECT_NE(all.end.message().find("truncated"), std::string::npos) << all.end.message();
  EXPECT_LE(all.records.size(), 3u);
}

TEST_F(WarcReaderFormsTest, GarbageIsReportedWithItsOffset) {
  WriteFile(Path("text.warc"), "this is not a WARC file\n");
  ReadAll text(Path("text.warc"));
  EXPECT_TRUE(text.records.empty());
  ASSERT_FALSE(text.end.ok());
  EXPECT_NE(text.end.message().find("offset 0: not a WARC record"), std::string::npos)
      << text.end.message();

  // Garbage after two good members: not a gzip member.
  const std::string good = Gzip(records_[0]) + Gzip(records_[1]);
  WriteFile(Path("tail.warc.gz"), good + "GARBAGE!");
  ReadAll tail(Path("tail.warc.gz"));
  EXPECT_EQ(tail.records.size(), 2u);
  ASSERT_FALSE(tail.end.ok());
  EXPECT_NE(
      tail.end.message().find("offset " + std::to_string(good.size()) + ": not a gzip member"),
      std::string::npos)
      << tail.end.message();

  // A corrupt deflate stream inside the second member.
  std::string second = Gzip(records_[1]);
  for (size_t i = 12; i < second.size() - 8; ++i) second[i] = static_cast<char>(0xff);
  WriteFile(Path("bad.warc.gz"), Gzip(records_[0]) + second);
  ReadAll bad(Path("bad.warc.gz"));
  EXPECT_EQ(bad.records.size(), 1u);
  ASSERT_FALSE(bad.end.ok());
  EXPECT_NE(bad.end.message().find("corrupt gzip data in the member at offset " +
                                   std::to_string(Gzip(records_[0]).size())),
            std::string::npos)
      << bad.end.message();

  // Plain records, then bytes that are not a record.
  WriteFile(Path("mid.warc"), records_[0] + "junk\r\n" + records_[1]);
  ReadAll mid(Path("mid.warc"));
  EXPECT_EQ(mid.records.size(), 1u);
  ASSERT_FALSE(mid.end.ok());
  EXPECT_NE(mid.end.message().find("offset " + std::to_string(records_[0].size())),
            std::string::npos)
      << mid.end.message();
}

TEST_F(WarcReaderTest, DechunksAndDecodes) {
  const std::string html = "<html><body>" + std::string(3000, 'x') + "</body></html>";
  const std::string gz = Gzip(html);
  std::string chunked;
  for (size_t at = 0; at < gz.size(); at += 100) {
    std::string piece = gz.substr(at, 100);
    char size[16];
    std::snprintf(size, sizeof(size), "%zx", piece.size());
    chunked += std::string(size) + (at == 0 ? ";ext=1" : "") + "\r\n" + piece + "\r\n";
  }
  chunked += "0\r\nX-Trailer: 1\r\n\r\n";
  const std::string head =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n"
      "Content-Type: text/html\r\n\r\n";
  const std::string zlib = Deflate(html, MAX_WBITS);
  const std::string raw = Deflate(html, -MAX_WBITS);
  // A payload stored de-chunked under a stale Transfer-Encoding header: passed through.
  const std::string stale = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n<p>plain</p>";
  WriteFile(Path("c.warc"),
            Response("http://x/c", "<urn:uuid:c>", head + chunked) +
                Response("http://x/z", "<urn:uuid:z>",
                         "HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\n\r\n" + zlib) +
                Response("http://x/r", "<urn:uuid:r>",
                         "HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\n\r\n" + raw) +
                Response("http://x/br", "<urn:uuid:br>",
                         "HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n\x0b\x02\x80") +
                Response("http://x/s", "<urn:uuid:s>", stale));
  ReadAll all(Path("c.warc"));
  ASSERT_TRUE(all.end.ok()) << all.end.message();
  ASSERT_EQ(all.records.size(), 5u);
  EXPECT_TRUE(all.records[0].chunked);
  EXPECT_EQ(all.records[0].payload, html);
  EXPECT_TRUE(all.records[0].payload_complete) << all.records[0].payload_error;
  EXPECT_EQ(all.records[0].payload_length, gz.size());  // the digest is of the coded entity
  EXPECT_EQ(First64(*all.records[0].payload_sha1),
            *DigestFromWarcPayloadDigest(WarcSha1Digest(gz)));
  EXPECT_EQ(all.records[1].payload, html);
  EXPECT_EQ(all.records[2].payload, html);
  EXPECT_FALSE(all.records[3].payload_complete);
  EXPECT_NE(all.records[3].payload_error.find("br is not decoded"), std::string::npos);
  EXPECT_EQ(all.records[4].payload, "<p>plain</p>");
}

TEST_F(WarcReaderTest, CutsAPayloadAtTheCapButDigestsAllOfIt) {
  const std::string big(100'000, 'y');
  WriteFile(Path("big.warc"),
            Response("http://x/big", "<urn:uuid:b>", "HTTP/1.1 200 OK\r\n\r\n" + big) +
                Response("http://x/next", "<urn:uuid:n>", "HTTP/1.1 200 OK\r\n\r\nnext"));
  WarcReaderOptions options;
  options.max_payload_bytes = 1000;
  ReadAll all(Path("big.warc"), options);
  ASSERT_TRUE(all.end.ok()) << all.end.message();
  ASSERT_EQ(all.records.size(), 2u);
  EXPECT_EQ(all.records[0].payload.size(), 1000u);
  EXPECT_FALSE(all.records[0].payload_complete);
  EXPECT_EQ(all.records[0].payload_length, big.size());
  EXPECT_EQ(First64(*all.records[0].payload_sha1),
            *DigestFromWarcPayloadDigest(WarcSha1Digest(big)));
  EXPECT_EQ(all.records[1].payload, "next");
}

TEST_F(WarcReaderTest, OnlyThePayloadsAskedForAreKept) {
  WriteFile(Path("k.warc"), Response("http://x/h", "<urn:uuid:h>",
                                     "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>h</p>") +
                                Response("http://x/i", "<urn:uuid:i>",
                                         "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\nPNG"));
  WarcReaderOptions options;
  options.keep_payload = [](const WarcReadRecord& r) {
    return r.http_content_type.starts_with("text/html");
  };
  ReadAll all(Path("k.warc"), options);
  ASSERT_EQ(all.records.size(), 2u);
  EXPECT_EQ(all.records[0].payload, "<p>h</p>");
  EXPECT_FALSE(all.records[1].payload_kept);
  EXPECT_EQ(all.records[1].payload, "");
  EXPECT_EQ(all.records[1].payload_length, 3u);
  EXPECT_TRUE(all.records[1].payload_sha1.has_value());
}

TEST_F(WarcReaderTest, ReadsFoldedFieldsBracketedUrisAndLfOnlyHeads) {
  std::string record =
      "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: <http://x/old>\r\n"
      "WARC-Record-ID: <urn:uuid:f>\r\nWARC-Truncated:\r\n length\r\n"
      "Content-Type: application/http;msgtype=response\r\n";
  const std::string block = "HTTP/1.1 200 OK\nContent-Type: text/html\n\nbody";
  record += "Content-Length: " + std::to_string(block.size()) + "\r\n\r\n" + block + "\r\n\r\n";
  WriteFile(Path("f.warc"), record);
  ReadAll all(Path("f.warc"));
  ASSERT_TRUE(all.end.ok()) << all.end.message();
  ASSERT_EQ(all.records.size(), 1u);
  EXPECT_EQ(all.records[0].target_uri, "http://x/old");
  EXPECT_EQ(all.records[0].truncated, "length");
  EXPECT_EQ(all.records[0].http_content_type, "text/html");
  EXPECT_EQ(all.records[0].payload, "body");
}

TEST_F(WarcReaderTest, ANonHttpResponseBlockIsSkipped) {
  WriteFile(Path("dns.warc"), Record("WARC/1.0",
                                     {{"WARC-Type", "response"},
                                      {"WARC-Target-URI", "dns:x"},
                                      {"Content-Type", "text/dns"}},
                                     "20240101 x. 300 IN A 127.0.0.1\n") +
                                  Response("http://x/", "<urn:uuid:1>", "not an HTTP head at all"));
  ReadAll all(Path("dns.warc"));
  ASSERT_TRUE(all.end.ok()) << all.end.message();
  ASSERT_EQ(all.records.size(), 2u);
  EXPECT_FALSE(all.records[0].http);
  EXPECT_FALSE(all.records[1].http);
  EXPECT_FALSE(all.records[1].payload_kept);
}

TEST_F(WarcReaderTest, AMissingFileIsAnIoError) {
  ReadAll all(Path("none.warc.gz"));
  EXPECT_EQ(all.end.code(), StatusCode::kIoError);
  EXPECT_NE(all.end.message().find("none.warc.gz"), std::string::npos);
}

}  // namespace
}  // namespace urlsieve
