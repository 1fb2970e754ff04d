#include "crawler/output/jsonl_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "frontier/frontier.h"
#include "tests/support/jsonl.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

class JsonlWriterTest : public ::testing::Test {
 protected:
  std::vector<nlohmann::json> Lines() { return testing::ReadJsonl(path_); }

  static PageRecord Record(std::string url) {
    PageRecord r;
    r.url = std::move(url);
    r.status = 200;
    r.content_type = "text/html; charset=utf-8";
    r.bytes = 1234;
    r.depth = 2;
    r.parent = "http://example.com/";
    r.fetch_ms = 12.5;
    r.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000123));
    r.links_found = 10;
    r.links_new = 4;
    return r;
  }

  testing::ScratchDir dir_{"urlsieve_jsonl_writer"};
  const std::string path_ = (dir_.path() / "pages.jsonl").string();
};

TEST_F(JsonlWriterTest, OneObjectPerLineWithEveryField) {
  auto w = JsonlWriter::Open(path_);
  ASSERT_TRUE(w.ok());
  PageRecord ok = Record("http://example.com/a");
  ok.final_url = "http://example.com/a/";
  ok.noindex = true;
  ok.canonical = "http://example.com/canonical";
  PageRecord failed = Record("http://example.com/b");
  failed.status = 0;
  failed.content_type.clear();
  failed.parent.clear();
  failed.error = "timeout: no response in 30000 ms";
  ASSERT_TRUE((*w)->Append(ok).ok());
  ASSERT_TRUE((*w)->Append(failed).ok());
  ASSERT_TRUE((*w)->Sync().ok());

  auto lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  const auto& a = lines[0];
  EXPECT_EQ(a["url"], "http://example.com/a");
  EXPECT_EQ(a["final_url"], "http://example.com/a/");
  EXPECT_EQ(a["status"], 200);
  EXPECT_EQ(a["content_type"], "text/html; charset=utf-8");
  EXPECT_EQ(a["bytes"], 1234);
  EXPECT_EQ(a["depth"], 2);
  EXPECT_EQ(a["parent"], "http://example.com/");
  EXPECT_EQ(a["fetch_ms"], 12.5);
  EXPECT_EQ(a["time"], "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(a["links_found"], 10);
  EXPECT_EQ(a["links_new"], 4);
  EXPECT_TRUE(a["error"].is_null());
  EXPECT_EQ(a["noindex"], true);
  EXPECT_EQ(a["canonical"], "http://example.com/canonical");

  const auto& b = lines[1];
  EXPECT_EQ(b["final_url"], "http://example.com/b");  // no redirect: same as url
  EXPECT_EQ(b["status"], 0);
  EXPECT_TRUE(b["content_type"].is_null());
  EXPECT_TRUE(b["parent"].is_null());
  EXPECT_EQ(b["error"], "timeout: no response in 30000 ms");
  EXPECT_FALSE(b.contains("noindex"));
  EXPECT_FALSE(b.contains("canonical"));
  EXPECT_FALSE(a.contains("body"));  // kept whole: no "body"
}

// docs/features/content-seen.md, "Non-HTML bodies": a body not kept whole says so.
TEST(PageRecordJsonTest, BodyNoteOnlyWhenTheBodyWasNotKeptWhole) {
  PageRecord r;
  r.url = "http://example.com/a.pdf";
  EXPECT_FALSE(ToJson(r).contains("body"));
  r.body = "skipped";
  EXPECT_EQ(ToJson(r)["body"], "skipped");
  r.body = "truncated";
  EXPECT_EQ(ToJson(r)["body"], "truncated");
}

TEST_F(JsonlWriterTest, InvalidUtf8StaysValidJson) {
  auto w = JsonlWriter::Open(path_);
  ASSERT_TRUE(w.ok());
  PageRecord r = Record(std::string("http://example.com/\xff\xfe\"\n\\", 24));
  r.error = std::string("bad\0byte", 8);
  ASSERT_TRUE((*w)->Append(r).ok());
  ASSERT_TRUE((*w)->Sync().ok());
  auto lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["url"], "http://example.com/\xEF\xBF\xBD\xEF\xBF\xBD\"\n\\");
}

TEST_F(JsonlWriterTest, ConcurrentAppendsNeverInterleave) {
  auto w = JsonlWriter::Open(path_);
  ASSERT_TRUE(w.ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        PageRecord r = Record("http://example.com/" + std::to_string(t) + "/" + std::to_string(i));
        r.content_type = std::string(static_cast<size_t>(i % 300), 'x');  // varied line lengths
        EXPECT_TRUE((*w)->Append(r).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE((*w)->Sync().ok());
  auto lines = Lines();
  ASSERT_EQ(lines.size(), 4000u);
  std::set<std::string> urls;
  for (const auto& l : lines) urls.insert(l["url"].get<std::string>());
  EXPECT_EQ(urls.size(), 4000u);
}

TEST_F(JsonlWriterTest, ResumeFromCheckpointDropsLaterLines) {
  uint64_t checkpoint;
  {
    auto w = JsonlWriter::Open(path_);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(Record("http://example.com/1")).ok());
    Result<OutputMark> mark = (*w)->Sync();
    ASSERT_TRUE(mark.ok());
    checkpoint = mark->size;
    ASSERT_TRUE((*w)->Append(Record("http://example.com/after-checkpoint")).ok());
  }  // destroyed: the buffered line reaches the file, as after a crash between checkpoints
  {
    std::ofstream torn(path_, std::ios::app);
    torn << "{\"url\": \"torn";  // a crash mid-line
  }
  auto w = JsonlWriter::Open(path_, checkpoint);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append(Record("http://example.com/2")).ok());
  ASSERT_TRUE((*w)->Sync().ok());
  auto lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["url"], "http://example.com/1");
  EXPECT_EQ(lines[1]["url"], "http://example.com/2");
}

TEST_F(JsonlWriterTest, AppendsToExistingFileWithoutTruncation) {
  { ASSERT_TRUE((*JsonlWriter::Open(path_))->Append(Record("http://example.com/1")).ok()); }
  { ASSERT_TRUE((*JsonlWriter::Open(path_))->Append(Record("http://example.com/2")).ok()); }
  EXPECT_EQ(Lines().size(), 2u);
}

// The bytes of both kinds of line are pinned: outputs written before this writer served both must
// read the same, and a resumed crawl's checksums cover these exact bytes.
TEST_F(JsonlWriterTest, PageAndRejectionLinesAreByteExact) {
  PageRecord page = Record("http://example.com/a");
  page.canonical = "http://example.com/c";
  auto w = JsonlWriter::Open(path_);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append(page).ok());
  ASSERT_TRUE((*w)->Append(Rejection{"http://example.com/\xff", 3, RejectReason::kMaxDepth, false, {}}).ok());
  ASSERT_TRUE((*w)->Sync().ok());
  std::ifstream in(path_, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(
      bytes,
      "{\"bytes\":1234,\"canonical\":\"http://example.com/c\",\"content_type\":\"text/html; "
      "charset=utf-8\",\"depth\":2,\"error\":null,\"fetch_ms\":12.5,\"final_url\":\"http://"
      "example.com/a\",\"links_found\":10,\"links_new\":4,\"parent\":\"http://example.com/\","
      "\"status\":200,\"time\":\"2023-11-14T22:13:20.123Z\",\"url\":\"http://example.com/a\"}\n"
      "{\"depth\":3,\"reason\":\"max_depth\",\"url\":\"http://example.com/\xEF\xBF\xBD\"}\n");
}

TEST(FormatUtcTest, Formats) {
  using std::chrono::milliseconds;
  std::chrono::system_clock::time_point t(milliseconds(1700000000123));
  EXPECT_EQ(FormatUtc(t, true), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(FormatUtc(t, false), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatUtc(std::chrono::system_clock::time_point(milliseconds(-1)), true),
            "1969-12-31T23:59:59.999Z");
}

}  // namespace
}  // namespace urlsieve
