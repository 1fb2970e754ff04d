#include "crawler/output/warc_writer.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::ReadFile;

// A strict reader for what WarcWriter promises: one gzip member per record, each member exactly
// one WARC/1.1 record (headers, Content-Length bytes of block, CRLF CRLF), digests that verify.
struct Record {
  std::map<std::string, std::string> headers;
  std::string block;
  uint64_t offset = 0;  // of its gzip member in the file
};

// Inflates the gzip member starting at data[*pos], advancing *pos past it.
::testing::AssertionResult InflateMember(const std::string& data, size_t* pos, std::string* out) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return ::testing::AssertionFailure() << "inflateInit2";
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + *pos));
  zs.avail_in = static_cast<uInt>(data.size() - *pos);
  char buf[16384];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out->append(buf, sizeof(buf) - zs.avail_out);
  } while (rc == Z_OK);
  *pos += zs.total_in;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) return ::testing::AssertionFailure() << "bad gzip member, rc=" << rc;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult ParseWarc(const std::string& path, std::vector<Record>* records) {
  const std::string data = ReadFile(path);
  size_t pos = 0;
  while (pos < data.size()) {
    Record r;
    r.offset = pos;
    std::string text;
    auto inflated = InflateMember(data, &pos, &text);
    if (!inflated) return inflated;
    if (text.rfind("WARC/1.1\r\n", 0) != 0) return ::testing::AssertionFailure() << "no version";
    size_t head_end = text.find("\r\n\r\n");
    if (head_end == std::string::npos) return ::testing::AssertionFailure() << "no header end";
    std::istringstream lines(text.substr(10, head_end - 10 + 2));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line.back() != '\r') return ::testing::AssertionFailure() << "not CRLF";
      line.pop_back();
      size_t colon = line.find(": ");
      if (colon == std::string::npos) return ::testing::AssertionFailure() << "bad line " << line;
      r.headers[line.substr(0, colon)] = line.substr(colon + 2);
    }
    size_t length = std::stoul(r.headers["Content-Length"]);
    size_t block_begin = head_end + 4;
    if (text.size() != block_begin + length + 4 ||
        text.substr(block_begin + length) != "\r\n\r\n") {
      return ::testing::AssertionFailure() << "member is not exactly one record";
    }
    r.block = text.substr(block_begin, length);
    if (r.headers["WARC-Block-Digest"] != WarcSha1Digest(r.block)) {
      return ::testing::AssertionFailure() << "block digest mismatch";
    }
    // A revisit's payload digest is the original's (its block holds no payload).
    if (r.headers.count("WARC-Payload-Digest") && r.headers["WARC-Type"] != "revisit") {
      size_t http_end = r.block.find("\r\n\r\n");
      if (http_end == std::string::npos) return ::testing::AssertionFailure() << "no HTTP head";
      if (r.headers["WARC-Payload-Digest"] != WarcSha1Digest(r.block.substr(http_end + 4))) {
        return ::testing::AssertionFailure() << "payload digest mismatch";
      }
    }
    records->push_back(std::move(r));
  }
  return ::testing::AssertionSuccess();
}

class WarcWriterTest : public ::testing::Test {
 protected:
  // ScratchDir names the process and the suite: two suites running at once (WarcWriterTest and
  // WarcRevisitTest share test names; two checkouts' ctest runs) never share a directory.
  void SetUp() override { path_ = (dir_ / "crawl.warc.gz").string(); }

  std::unique_ptr<WarcWriter> Open(std::optional<uint64_t> truncate_to = {}) {
    WarcWriterOptions options;
    options.user_agent = "urlsieve-test/1";
    options.truncate_to = truncate_to;
    Result<std::unique_ptr<WarcWriter>> w = WarcWriter::Open(path_, options);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(*w) : nullptr;
  }

  static WarcExchange Exchange(std::string_view url, std::string_view payload) {
    WarcExchange ex;
    ex.target_uri = url;
    ex.ip_address = "127.0.0.1";
    ex.date = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
    ex.request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: urlsieve-test/1\r\n\r\n";
    ex.response_head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 11\r\n\r\n";
    ex.payload = payload;
    return ex;
  }

  testing::ScratchDir scratch_{"warc"};
  const std::filesystem::path dir_ = scratch_.path();
  std::string path_;
};

TEST(WarcDigestTest, KnownAnswers) {
  // SHA-1 of "" and "abc" (FIPS 180-4 examples) in RFC 4648 base32.
  EXPECT_EQ(WarcSha1Digest(""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
  EXPECT_EQ(WarcSha1Digest("abc"), "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
}

TEST_F(WarcWriterTest, WarcinfoThenRequestResponsePairs) {
  auto w = Open();
  ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/", "hello world")).ok());
  ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/b", "hello again")).ok());
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  ASSERT_EQ(records.size(), 5u);

  const Record& info = records[0];
  EXPECT_EQ(info.headers.at("WARC-Type"), "warcinfo");
  EXPECT_EQ(info.headers.at("Content-Type"), "application/warc-fields");
  EXPECT_EQ(info.headers.at("WARC-Filename"), "crawl.warc.gz");
  EXPECT_NE(info.block.find("format: WARC File Format 1.1\r\n"), std::string::npos);
  EXPECT_NE(info.block.find("http-header-user-agent: urlsieve-test/1\r\n"), std::string::npos);

  const Record& req = records[1];
  const Record& resp = records[2];
  EXPECT_EQ(req.headers.at("WARC-Type"), "request");
  EXPECT_EQ(resp.headers.at("WARC-Type"), "response");
  EXPECT_EQ(req.headers.at("Content-Type"), "application/http;msgtype=request");
  EXPECT_EQ(resp.headers.at("Content-Type"), "application/http;msgtype=response");
  EXPECT_EQ(req.headers.at("WARC-Target-URI"), "http://127.0.0.1/");
  EXPECT_EQ(resp.headers.at("WARC-Target-URI"), "http://127.0.0.1/");
  EXPECT_EQ(req.headers.at("WARC-Date"), "2023-11-14T22:13:20Z");
  EXPECT_EQ(resp.headers.at("WARC-IP-Address"), "127.0.0.1");
  EXPECT_EQ(req.headers.at("WARC-Concurrent-To"), resp.headers.at("WARC-Record-ID"));
  EXPECT_EQ(resp.headers.at("WARC-Warcinfo-ID"), info.headers.at("WARC-Record-ID"));
  EXPECT_EQ(resp.headers.at("WARC-Payload-Digest"), WarcSha1Digest("hello world"));
  EXPECT_EQ(resp.block,
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 11\r\n\r\nhello world");
  EXPECT_EQ(req.block, Exchange("", "").request);
  EXPECT_EQ(resp.headers.count("WARC-Truncated"), 0u);

  // Record IDs: unique <urn:uuid:...> version 4.
  std::map<std::string, int> ids;
  for (const Record& r : records) {
    const std::string& id = r.headers.at("WARC-Record-ID");
    ASSERT_EQ(id.size(), 47u) << id;
    EXPECT_EQ(id.substr(0, 10), "<urn:uuid:");
    EXPECT_EQ(id[24], '4');
    ++ids[id];
  }
  EXPECT_EQ(ids.size(), records.size());
}

TEST_F(WarcWriterTest, DecodedPayloadHeadersAreRewritten) {
  auto w = Open();
  WarcExchange ex = Exchange("http://127.0.0.1/gz", "decoded body");
  ex.response_head =
      "HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Encoding: gzip\n"
      "Transfer-Encoding: chunked\nContent-Length: 5\nX-Other: kept\n\n";
  ex.payload_decoded = true;
  ex.truncated = "length";
  ASSERT_TRUE(w->WriteExchange(ex).ok());
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].block,
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Crawler-Content-Encoding: gzip\r\n"
            "X-Crawler-Transfer-Encoding: chunked\r\nX-Crawler-Content-Length: 5\r\n"
            "X-Other: kept\r\nContent-Length: 12\r\n\r\ndecoded body");
  EXPECT_EQ(records[2].headers.at("WARC-Truncated"), "length");
}

// docs/features/content-seen.md, "Non-HTML bodies": only the first bytes of a body were kept.
// The record says so (WARC-Truncated), stays a valid HTTP message (Content-Length: the bytes
// stored) and keeps the length the server announced under X-Crawler-Content-Length.
TEST_F(WarcWriterTest, TruncatedRecordKeepsTheAnnouncedLengthAndSaysWhy) {
  auto w = Open();
  WarcExchange first = Exchange("http://127.0.0.1/app.js", "var a");
  first.response_head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/javascript\r\nContent-Length: 50000\r\n\r\n";
  first.truncated = "length";
  WarcExchange none = Exchange("http://127.0.0.1/doc.pdf", "");
  none.response_head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: 9000\r\n\r\n";
  none.truncated = "length";
  WarcExchange slow = Exchange("http://127.0.0.1/slow", "par");
  slow.response_head = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
  slow.truncated = "time";
  for (const WarcExchange* ex : {&first, &none, &slow}) ASSERT_TRUE(w->WriteExchange(*ex).ok());
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  ASSERT_EQ(records.size(), 7u);
  EXPECT_EQ(records[2].headers.at("WARC-Truncated"), "length");
  EXPECT_EQ(records[2].block,
            "HTTP/1.1 200 OK\r\nContent-Type: application/javascript\r\n"
            "X-Crawler-Content-Length: 50000\r\nContent-Length: 5\r\n\r\nvar a");
  EXPECT_EQ(records[2].headers.at("WARC-Payload-Digest"), WarcSha1Digest("var a"));
  EXPECT_EQ(records[4].headers.at("WARC-Truncated"), "length");
  EXPECT_EQ(records[4].block,
            "HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n"
            "X-Crawler-Content-Length: 9000\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(records[6].headers.at("WARC-Truncated"), "time");
}

TEST_F(WarcWriterTest, EncodingKeptWhenPayloadIsNotDecoded) {
  auto w = Open();
  WarcExchange ex = Exchange("http://127.0.0.1/raw", "12345");
  ex.response_head = "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\n";
  ASSERT_TRUE(w->WriteExchange(ex).ok());
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  EXPECT_EQ(records[2].block,
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\n12345");
}

TEST_F(WarcWriterTest, BinaryAndEmptyPayloads) {
  auto w = Open();
  std::string binary;
  uint32_t x = 1;
  for (int i = 0; i < 300000; ++i) {
    x = x * 1664525u + 1013904223u;
    binary.push_back(static_cast<char>(x >> 24));
  }
  ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/bin", binary)).ok());
  ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/empty", "")).ok());
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records[4].headers.at("WARC-Payload-Digest"), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
}

TEST_F(WarcWriterTest, ResumeTruncatesToCheckpointAndKeepsOneWarcinfo) {
  uint64_t checkpoint;
  {
    auto w = Open();
    ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/1", "one")).ok());
    Result<OutputMark> mark = w->Sync();
    ASSERT_TRUE(mark.ok());
    checkpoint = mark->size;
    ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/lost", "after the checkpoint")).ok());
  }
  {
    std::ofstream torn(path_, std::ios::binary | std::ios::app);
    torn << "\x1f\x8b partial member";
  }
  auto w = Open(checkpoint);
  ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/2", "two")).ok());
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records[0].headers.at("WARC-Type"), "warcinfo");
  EXPECT_EQ(records[3].offset, checkpoint);
  EXPECT_EQ(records[3].headers.at("WARC-Target-URI"), "http://127.0.0.1/2");
}

TEST_F(WarcWriterTest, TruncateBeyondFileIsCorruption) {
  { Open(); }
  WarcWriterOptions options;
  options.truncate_to = 1 << 30;
  Result<std::unique_ptr<WarcWriter>> w = WarcWriter::Open(path_, options);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kCorruption);
}

TEST_F(WarcWriterTest, UnwritablePathIsIoError) {
  Result<std::unique_ptr<WarcWriter>> w =
      WarcWriter::Open((dir_ / "missing" / "x.warc.gz").string(), {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kIoError);
}

TEST_F(WarcWriterTest, ConcurrentWritersKeepPairsAdjacent) {
  auto w = Open();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        std::string url = "http://127.0.0.1/" + std::to_string(t) + "/" + std::to_string(i);
        std::string body(100 + i, static_cast<char>('a' + t));
        EXPECT_TRUE(w->WriteExchange(Exchange(url, body)).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  ASSERT_EQ(records.size(), 1u + 2 * 200);
  for (size_t i = 1; i < records.size(); i += 2) {
    EXPECT_EQ(records[i].headers.at("WARC-Concurrent-To"),
              records[i + 1].headers.at("WARC-Record-ID"));
  }
}

TEST_F(WarcWriterTest, EveryCompressionLevelWritesReadableMembers) {
  for (int level : {1, 2, 6, 9, 12}) {
    SCOPED_TRACE(level);
    std::filesystem::remove(path_);
    WarcWriterOptions options;
    options.compression_level = level;
    auto w = WarcWriter::Open(path_, options);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    std::string body;
    for (int i = 0; i < 2000; ++i) body += "<a href=\"/p" + std::to_string(i % 97) + "\">x</a>\n";
    ASSERT_TRUE((*w)->WriteExchange(Exchange("http://127.0.0.1/l", body)).ok());
    ASSERT_TRUE((*w)->Sync().ok());
    std::vector<Record> records;
    ASSERT_TRUE(ParseWarc(path_, &records));
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records[2].headers.at("WARC-Payload-Digest"), WarcSha1Digest(body));
  }
  for (int level : {0, 13, -1}) {
    WarcWriterOptions options;
    options.compression_level = level;
    auto w = WarcWriter::Open(path_, options);
    ASSERT_FALSE(w.ok()) << level;
    EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(w.status().ToString().find("1..12"), std::string::npos) << w.status().ToString();
  }
}

// The crawl passes the payload digest it computed for its fetch record; the writer does not hash
// the payload again for it (it only computes the block digest).
TEST_F(WarcWriterTest, PrecomputedPayloadDigestIsWrittenAsGiven) {
  auto w = Open();
  WarcExchange ex = Exchange("http://127.0.0.1/", "hello world");
  const std::string given = WarcSha1Digest("hello world");
  ex.payload_digest = given;
  WarcRecordRef ref;
  ASSERT_TRUE(w->WriteExchange(ex, &ref).ok());
  // A digest that is not the payload's shows it is taken as given (the caller's contract).
  WarcExchange other = Exchange("http://127.0.0.1/o", "other");
  other.payload_digest = given;
  ASSERT_TRUE(w->WriteExchange(other).ok());
  ASSERT_TRUE(w->Sync().ok());
  EXPECT_EQ(ref.payload_digest, given);
  std::vector<Record> records;
  ASSERT_FALSE(ParseWarc(path_, &records));  // the second record's payload digest is wrong
  ASSERT_EQ(records.size(), 4u);             // all but the last verified
  EXPECT_EQ(records[2].headers.at("WARC-Payload-Digest"), given);
}

// The per-thread buffers grow for a large body and are released after it; the records after it
// are intact.
TEST_F(WarcWriterTest, LargeRecordBetweenSmallOnes) {
  auto w = Open();
  std::string large;
  uint32_t x = 7;
  for (int i = 0; i < (6 << 20); ++i) {
    x = x * 1664525u + 1013904223u;
    large.push_back(static_cast<char>('a' + (x >> 28)));
  }
  ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/s1", "small one")).ok());
  ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/large", large)).ok());
  ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/s2", "small two")).ok());
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  ASSERT_EQ(records.size(), 7u);
  EXPECT_EQ(records[4].headers.at("WARC-Payload-Digest"), WarcSha1Digest(large));
  EXPECT_EQ(records[6].headers.at("WARC-Target-URI"), "http://127.0.0.1/s2");
  EXPECT_EQ(records[6].block.substr(records[6].block.size() - 9), "small two");
}

// gzip(1) reads the file as the concatenation of its members: the records, in order.
TEST_F(WarcWriterTest, GzipToolReadsEveryMember) {
  if (std::system("command -v gzip >/dev/null 2>&1") != 0) GTEST_SKIP() << "gzip not available";
  auto w = Open();
  WarcRecordRef ref;
  ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/", "hello world"), &ref).ok());
  WarcRevisit rv;
  rv.target_uri = "http://127.0.0.1/";
  rv.request = "GET / HTTP/1.1\r\n\r\n";
  rv.response_head = "HTTP/1.1 304 Not Modified\r\n\r\n";
  rv.refers_to = &ref;
  ASSERT_TRUE(w->WriteRevisit(rv).ok());
  ASSERT_TRUE(w->Sync().ok());
  const std::string out = (dir_ / "zcat.txt").string();
  ASSERT_EQ(std::system(("gzip -t " + path_ + " && gzip -dc " + path_ + " > " + out).c_str()), 0);
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  const std::string text = ReadFile(out);
  size_t at = 0, count = 0;
  while ((at = text.find("WARC/1.1\r\n", at)) != std::string::npos) {
    ++count;
    ++at;
  }
  EXPECT_EQ(count, records.size());
  EXPECT_EQ(count, 5u);
  EXPECT_EQ(text.rfind("WARC/1.1\r\n", 0), 0u);
  EXPECT_EQ(text.substr(text.size() - 4), "\r\n\r\n");
}

// A second, independent reader (Python's zlib, hashlib and base64) agrees with the one above.
TEST_F(WarcWriterTest, IndependentCheckerAcceptsTheFile) {
  if (std::system("command -v python3 >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 not available";
  }
  auto w = Open();
  WarcExchange ex = Exchange("http://127.0.0.1/gz", "decoded body");
  ex.response_head = "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\n";
  ex.payload_decoded = true;
  ASSERT_TRUE(w->WriteExchange(ex).ok());
  ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/", "hello world")).ok());
  ASSERT_TRUE(w->Sync().ok());
  const std::string out = (dir_ / "check.txt").string();
  const std::string cmd = "python3 " + std::string(URLSIEVE_SOURCE_DIR) +
                          "/tests/crawler/warc_check.py " + path_ + " > " + out + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << ReadFile(out);
  EXPECT_EQ(ReadFile(out).find("0 warcinfo -\n"), 0u) << ReadFile(out);
  EXPECT_NE(ReadFile(out).find(" response http://127.0.0.1/gz\n"), std::string::npos);
}

// The original capture and the re-fetch of http://127.0.0.1/p, for the revisit tests.
class WarcRevisitTest : public WarcWriterTest {
 protected:
  static WarcRevisit Revisit(WarcRevisit::Profile profile, const WarcRecordRef* ref) {
    WarcRevisit rv;
    rv.profile = profile;
    rv.target_uri = "http://127.0.0.1/p";
    rv.ip_address = "127.0.0.1";
    rv.date = std::chrono::system_clock::time_point(std::chrono::seconds(1700086400));
    rv.request =
        "GET /p HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: \"v1\"\r\n"
        "If-Modified-Since: Tue, 14 Nov 2023 22:13:20 GMT\r\n\r\n";
    rv.response_head = "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n";
    rv.refers_to = ref;
    return rv;
  }

  // Runs the independent checker on `files`; returns its exit status and output.
  std::pair<int, std::string> Check(const std::vector<std::string>& files,
                                    const std::string& flags = "") {
    const std::string out = (dir_ / "check.txt").string();
    std::string cmd =
        "python3 " + std::string(URLSIEVE_SOURCE_DIR) + "/tests/crawler/warc_check.py " + flags;
    for (const std::string& f : files) cmd.append(" ").append(f);
    cmd.append(" > ").append(out).append(" 2>&1");
    int rc = std::system(cmd.c_str());
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, ReadFile(out)};
  }

  static bool HavePython() { return std::system("command -v python3 >/dev/null 2>&1") == 0; }
};

// The checker's own test: a 200 with an empty payload whose Content-Length (or the
// X-Crawler-Content-Length the writer keeps) says otherwise is an empty 200 a replay would show as
// complete, unless WARC-Truncated says it was cut.
TEST_F(WarcRevisitTest, CheckerRejectsAnEmpty200ThatClaimsABodyUnlessTruncated) {
  if (!HavePython()) GTEST_SKIP() << "python3 not available";
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/css\r\nContent-Length: 1234\r\n\r\n";
  {
    auto w = Open();
    WarcExchange ex = Exchange("http://127.0.0.1/style.css", "");
    ex.response_head = head;
    ASSERT_TRUE(w->WriteExchange(ex).ok());  // as the writer did before: no WARC-Truncated
    ASSERT_TRUE(w->Sync().ok());
  }
  auto [rc, out] = Check({path_});
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("empty payload"), std::string::npos) << out;

  std::filesystem::remove(path_);
  {
    auto w = Open();
    WarcExchange ex = Exchange("http://127.0.0.1/style.css", "");
    ex.response_head = head;
    ex.truncated = "length";
    ASSERT_TRUE(w->WriteExchange(ex).ok());
    // An empty 200 that says it is empty, and a 204, are fine.
    WarcExchange empty = Exchange("http://127.0.0.1/empty", "");
    empty.response_head = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    ASSERT_TRUE(w->WriteExchange(empty).ok());
    ASSERT_TRUE(w->Sync().ok());
  }
  auto [ok_rc, ok_out] = Check({path_});
  EXPECT_EQ(ok_rc, 0) << ok_out;
}

TEST_F(WarcRevisitTest, ServerNotModifiedRefersToTheOriginalResponse) {
  auto w = Open();
  WarcRecordRef ref;
  WarcExchange ex = Exchange("http://127.0.0.1/p", "hello world");
  ASSERT_TRUE(w->WriteExchange(ex, &ref).ok());
  ASSERT_TRUE(w->WriteRevisit(Revisit(WarcRevisit::Profile::kServerNotModified, &ref)).ok());
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  ASSERT_EQ(records.size(), 5u);
  const Record& original = records[2];
  EXPECT_EQ(ref.record_id, original.headers.at("WARC-Record-ID"));
  EXPECT_EQ(ref.target_uri, "http://127.0.0.1/p");
  EXPECT_EQ(ref.date, original.headers.at("WARC-Date"));
  EXPECT_EQ(ref.payload_digest, WarcSha1Digest("hello world"));

  const Record& req = records[3];
  const Record& rv = records[4];
  EXPECT_EQ(req.headers.at("WARC-Type"), "request");
  EXPECT_EQ(req.headers.at("WARC-Concurrent-To"), rv.headers.at("WARC-Record-ID"));
  EXPECT_EQ(req.block, Revisit(WarcRevisit::Profile::kServerNotModified, &ref).request);
  EXPECT_EQ(rv.headers.at("WARC-Type"), "revisit");
  EXPECT_EQ(rv.headers.at("WARC-Profile"),
            "http://netpreserve.org/warc/1.1/revisit/server-not-modified");
  EXPECT_EQ(rv.headers.at("WARC-Refers-To"), original.headers.at("WARC-Record-ID"));
  EXPECT_EQ(rv.headers.at("WARC-Refers-To-Target-URI"), "http://127.0.0.1/p");
  EXPECT_EQ(rv.headers.at("WARC-Refers-To-Date"), "2023-11-14T22:13:20Z");
  EXPECT_EQ(rv.headers.at("WARC-Date"), "2023-11-15T22:13:20Z");
  EXPECT_EQ(rv.headers.at("WARC-Target-URI"), "http://127.0.0.1/p");
  EXPECT_EQ(rv.headers.at("WARC-IP-Address"), "127.0.0.1");
  EXPECT_EQ(rv.headers.at("WARC-Warcinfo-ID"), records[0].headers.at("WARC-Record-ID"));
  EXPECT_EQ(rv.headers.at("WARC-Payload-Digest"), original.headers.at("WARC-Payload-Digest"));
  EXPECT_EQ(rv.headers.at("Content-Type"), "application/http;msgtype=response");
  EXPECT_EQ(rv.headers.count("WARC-Truncated"), 0u);
  EXPECT_EQ(rv.block, "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n");
}

TEST_F(WarcRevisitTest, IdenticalPayloadDigestKeepsTheHeadWithItsContentLength) {
  auto w = Open();
  WarcRecordRef ref;
  WarcExchange ex = Exchange("http://127.0.0.1/p", "decoded body");
  ex.response_head = "HTTP/1.1 200 OK\nContent-Encoding: gzip\nContent-Length: 5\n\n";
  ex.payload_decoded = true;
  ASSERT_TRUE(w->WriteExchange(ex, &ref).ok());
  WarcRevisit rv = Revisit(WarcRevisit::Profile::kIdenticalPayloadDigest, &ref);
  rv.response_head =
      "HTTP/1.1 200 OK\nContent-Encoding: gzip\nTransfer-Encoding: chunked\nContent-Length: 5\n"
      "ETag: \"v2\"\n\n";
  rv.payload_decoded = true;
  ASSERT_TRUE(w->WriteRevisit(rv).ok());
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  ASSERT_EQ(records.size(), 5u);
  const Record& revisit = records[4];
  EXPECT_EQ(revisit.headers.at("WARC-Profile"),
            "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest");
  EXPECT_EQ(revisit.headers.at("WARC-Payload-Digest"), WarcSha1Digest("decoded body"));
  EXPECT_EQ(revisit.headers.at("WARC-Refers-To"), records[2].headers.at("WARC-Record-ID"));
  // Same rewriting as the original's head, but Content-Length still describes the original
  // payload (this block has none).
  EXPECT_EQ(revisit.block,
            "HTTP/1.1 200 OK\r\nX-Crawler-Content-Encoding: gzip\r\n"
            "X-Crawler-Transfer-Encoding: chunked\r\nContent-Length: 5\r\nETag: \"v2\"\r\n\r\n");
  EXPECT_EQ(revisit.headers.count("WARC-Truncated"), 0u);
}

TEST_F(WarcRevisitTest, UnknownReferenceFieldsAreOmitted) {
  auto w = Open();
  ASSERT_TRUE(w->WriteRevisit(Revisit(WarcRevisit::Profile::kServerNotModified, nullptr)).ok());
  WarcRecordRef partial;  // known from the crawl's fetch record, not from a WARC record
  partial.target_uri = "http://127.0.0.1/p";
  partial.payload_digest = WarcSha1Digest("hello world");
  ASSERT_TRUE(w->WriteRevisit(Revisit(WarcRevisit::Profile::kServerNotModified, &partial)).ok());
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  ASSERT_EQ(records.size(), 5u);
  for (const char* field : {"WARC-Refers-To", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date",
                            "WARC-Payload-Digest"}) {
    EXPECT_EQ(records[2].headers.count(field), 0u) << field;
  }
  EXPECT_EQ(records[4].headers.count("WARC-Refers-To"), 0u);
  EXPECT_EQ(records[4].headers.count("WARC-Refers-To-Date"), 0u);
  EXPECT_EQ(records[4].headers.at("WARC-Refers-To-Target-URI"), "http://127.0.0.1/p");
  EXPECT_EQ(records[4].headers.at("WARC-Payload-Digest"), WarcSha1Digest("hello world"));
}

TEST_F(WarcRevisitTest, ConcurrentRevisitsKeepPairsAdjacent) {
  auto w = Open();
  WarcRecordRef ref;
  ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/p", "hello world"), &ref).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        if ((i + t) % 2 == 0) {
          EXPECT_TRUE(
              w->WriteRevisit(Revisit(WarcRevisit::Profile::kServerNotModified, &ref)).ok());
        } else {
          EXPECT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/x", "body")).ok());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(w->Sync().ok());
  std::vector<Record> records;
  ASSERT_TRUE(ParseWarc(path_, &records));
  ASSERT_EQ(records.size(), 1u + 2 + 2 * 200);
  size_t revisits = 0;
  for (size_t i = 1; i < records.size(); i += 2) {
    EXPECT_EQ(records[i].headers.at("WARC-Type"), "request");
    EXPECT_EQ(records[i].headers.at("WARC-Concurrent-To"),
              records[i + 1].headers.at("WARC-Record-ID"));
    revisits += records[i + 1].headers.at("WARC-Type") == "revisit";
  }
  EXPECT_EQ(revisits, 100u);
}

// The checker resolves WARC-Refers-To across the files given (a re-crawl's WARC after the first
// crawl's) and refuses a revisit whose reference or digest does not match its original.
TEST_F(WarcRevisitTest, IndependentCheckerValidatesRevisitsAcrossFiles) {
  if (!HavePython()) GTEST_SKIP() << "python3 not available";
  WarcRecordRef ref;
  {
    auto first = Open();
    ASSERT_TRUE(first->WriteExchange(Exchange("http://127.0.0.1/p", "hello world"), &ref).ok());
    ASSERT_TRUE(first->Sync().ok());
  }
  const std::string second_path = (dir_ / "second.warc.gz").string();
  auto second = WarcWriter::Open(second_path, {});
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(
      (*second)->WriteRevisit(Revisit(WarcRevisit::Profile::kServerNotModified, &ref)).ok());
  WarcRevisit identical = Revisit(WarcRevisit::Profile::kIdenticalPayloadDigest, &ref);
  identical.response_head = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n";
  ASSERT_TRUE((*second)->WriteRevisit(identical).ok());
  ASSERT_TRUE((*second)->Sync().ok());

  auto [rc, out] = Check({path_, second_path});
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find(" revisit http://127.0.0.1/p\n"), std::string::npos) << out;
  // Alone, the second file's revisits name a record it does not hold.
  std::tie(rc, out) = Check({second_path});
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("names no response record"), std::string::npos) << out;
}

TEST_F(WarcRevisitTest, IndependentCheckerRefusesInconsistentRevisits) {
  if (!HavePython()) GTEST_SKIP() << "python3 not available";
  struct Case {
    const char* name;
    std::function<void(WarcRecordRef*, WarcRevisit*)> spoil;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"payload digest",
       [](WarcRecordRef* r, WarcRevisit*) { r->payload_digest = WarcSha1Digest("x"); },
       "warc-payload-digest"},
      {"date", [](WarcRecordRef* r, WarcRevisit*) { r->date = "2020-01-01T00:00:00Z"; },
       "warc-refers-to-date"},
      {"target", [](WarcRecordRef* r, WarcRevisit*) { r->target_uri = "http://127.0.0.1/q"; },
       "warc-refers-to-target-uri"},
      {"unknown id",
       [](WarcRecordRef* r, WarcRevisit*) {
         r->record_id = "<urn:uuid:00000000-0000-4000-8000-000000000000>";
       },
       "names no response record"},
      {"no reference", [](WarcRecordRef*, WarcRevisit* rv) { rv->refers_to = nullptr; },
       "without WARC-Refers-To"},
      {"not a 304",
       [](WarcRecordRef*, WarcRevisit* rv) { rv->response_head = "HTTP/1.1 200 OK\r\n\r\n"; },
       "server-not-modified revisit with status line"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::filesystem::remove(path_);
    auto w = Open();
    WarcRecordRef ref;
    ASSERT_TRUE(w->WriteExchange(Exchange("http://127.0.0.1/p", "hello world"), &ref).ok());
    WarcRevisit rv = Revisit(WarcRevisit::Profile::kServerNotModified, &ref);
    WarcRecordRef spoilt = ref;
    rv.refers_to = &spoilt;
    c.spoil(&spoilt, &rv);
    ASSERT_TRUE(w->WriteRevisit(rv).ok());
    ASSERT_TRUE(w->Sync().ok());
    auto [rc, out] = Check({path_});
    EXPECT_EQ(rc, 1) << out;
    EXPECT_NE(out.find(c.message), std::string::npos) << out;
  }
  // A revisit whose original is unknown is accepted when asked.
  std::filesystem::remove(path_);
  auto w = Open();
  ASSERT_TRUE(w->WriteRevisit(Revisit(WarcRevisit::Profile::kServerNotModified, nullptr)).ok());
  ASSERT_TRUE(w->Sync().ok());
  auto [rc, out] = Check({path_}, "--allow-unreferenced-revisits");
  EXPECT_EQ(rc, 0) << out;
  std::tie(rc, out) = Check({path_});
  EXPECT_EQ(rc, 1) << out;
}

}  // namespace
}  // namespace urlsieve
