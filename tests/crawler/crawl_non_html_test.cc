// Non-HTML bodies end to end (docs/features/content-seen.md, "Non-HTML bodies"): `urlsieve crawl`
// over a site on 127.0.0.1 with CSS, JavaScript, a PDF-like binary and a file past the body cap.
// With --warc every record passes the independent checker (tests/crawler/warc_check.py) and the
// archived payloads are the served bytes (whole, or a prefix marked WARC-Truncated: length);
// without it pages.jsonl says "body": "skipped" and the bodies are not downloaded.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crawler/output/warc_writer.h"
#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tools/site_server/map_site.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kCap = 256 * 1024;       // --max-body-bytes
constexpr uint64_t kBigSize = 64ull << 20;  // /big.bin: past the cap, produced as it is read

// The byte at `offset` of /big.bin.
char BigByte(uint64_t offset) { return static_cast<char>((offset * 131 + (offset >> 9)) & 0xFF); }
std::string BigBytes(uint64_t offset, uint64_t length) {
  std::string out;
  out.reserve(length);
  for (uint64_t i = 0; i < length; ++i) out.push_back(BigByte(offset + i));
  return out;
}

class CrawlNonHtmlTest : public testing::CrawlTest {
 protected:
  CrawlNonHtmlTest() : CrawlTest("urlsieve_non_html") {}

  void SetUp() override {
    for (int i = 0; i < 100; ++i) css_ += ".c" + std::to_string(i) + " { color: #123456 }\n";
    for (int i = 0; i < 4000; ++i)
      js_ += "var v" + std::to_string(i) + " = " + std::to_string(i) + ";\n";
    // A PDF-like binary: NUL bytes, and a link that must not be followed (never parsed).
    pdf_ = "%PDF-1.4\n<a href=\"/hidden\">hidden</a>\n";
    for (uint32_t i = 0, x = 7; i < 150 * 1024; ++i) {
      x = x * 1664525u + 1013904223u;
      pdf_.push_back(static_cast<char>(x >> 24));
    }
    Serve([this](const std::vector<std::string>&) {
      auto map = std::make_unique<site::MapSite>();
      map->Set("/", "text/html",
               "<html><body><a href=/style.css>css</a> <a href=/app.js>js</a> "
               "<a href=/paper.pdf>pdf</a> <a href=/big.bin>big</a></body></html>");
      map->Set("/style.css", "text/css", css_);
      map->Set("/app.js", "application/javascript", js_);
      map->Set("/paper.pdf", "application/pdf", pdf_);
      map->Set("/hidden", "text/html", "<p>never linked from HTML</p>");
      site::SiteResponse big;
      big.content_type = "application/octet-stream";
      big.generated_size = kBigSize;
      big.generate = [this](uint64_t offset, size_t length) {
        const uint64_t n = std::min<uint64_t>(length, kBigSize - offset);
        big_generated_ += n;
        return BigBytes(offset, n);
      };
      map->Set("/big.bin", std::move(big));
      return map;
    });
  }

  // `urlsieve crawl` into Dir()/name with `flags`; returns the output directory.
  fs::path Crawl(const std::string& name, std::vector<std::string> flags) {
    const fs::path out = Dir() / name;
    std::vector<std::string> args = {"crawl",
                                     "--seeds",
                                     Seeds().string(),
                                     "--out",
                                     out.string(),
                                     "--threads",
                                     "2",
                                     "--delay-ms",
                                     "0",
                                     "--max-body-bytes",
                                     std::to_string(kCap),
                                     "--log-level",
                                     "quiet"};
    args.insert(args.end(), flags.begin(), flags.end());
    const testing::ProgramRun run = testing::RunUrlsieve(args, Dir());
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return out;
  }

  // pages.jsonl of `out`, by path ("/app.js").
  std::map<std::string, nlohmann::json> Pages(const fs::path& out) const {
    std::map<std::string, nlohmann::json> pages;
    for (nlohmann::json& page : testing::ReadJsonl(out / "pages.jsonl")) {
      const std::string url = page["url"];
      pages[url.substr(server_->Url("").size())] = std::move(page);
    }
    return pages;
  }

  // The response records of out/crawl.warc.gz (tests/crawler/warc_records.py), by path, after the
  // independent checker passed the file.
  std::map<std::string, nlohmann::json> Responses(const fs::path& out) const {
    const std::string warc = (out / "crawl.warc.gz").string();
    const std::string tests = std::string(URLSIEVE_SOURCE_DIR) + "/tests/crawler/";
    const testing::ProgramRun check =
        testing::RunProgram({"python3", tests + "warc_check.py", warc}, Dir());
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    const testing::ProgramRun list =
        testing::RunProgram({"python3", tests + "warc_records.py", warc}, Dir());
    EXPECT_EQ(list.exit_code, 0) << list.err;
    std::map<std::string, nlohmann::json> responses;
    for (const std::string& line : testing::Lines(list.out)) {
      nlohmann::json record = nlohmann::json::parse(line);
      if (record["type"] != "response") continue;
      const std::string target = record["target"];
      responses[target.substr(server_->Url("").size())] = std::move(record);
    }
    return responses;
  }

  size_t Fetches(const std::string& resource) const { return server_->log().Count(0, resource); }

  std::string css_, js_, pdf_;
  std::atomic<uint64_t> big_generated_{0};
};

TEST_F(CrawlNonHtmlTest, WarcArchivesTheWholeBodiesAndMarksTheOneCutAtTheCap) {
  const fs::path out = Crawl("full", {"--warc"});
  std::map<std::string, nlohmann::json> responses = Responses(out);
  const std::map<std::string, std::string> served = {
      {"/style.css", css_}, {"/app.js", js_}, {"/paper.pdf", pdf_}};
  for (const auto& [path, body] : served) {
    ASSERT_TRUE(responses.count(path)) << path;
    const nlohmann::json& r = responses[path];
    EXPECT_EQ(r["http_status"], 200) << r;
    EXPECT_TRUE(r["truncated"].is_null()) << r;
    EXPECT_EQ(r["payload_length"], body.size()) << r;
    EXPECT_EQ(r["payload_digest"], WarcSha1Digest(body)) << r;  // the served bytes, all of them
  }
  ASSERT_TRUE(responses.count("/big.bin"));
  const nlohmann::json& big = responses["/big.bin"];
  EXPECT_EQ(big["truncated"], "length") << big;
  EXPECT_EQ(big["payload_length"], kCap) << big;
  EXPECT_EQ(big["payload_digest"], WarcSha1Digest(BigBytes(0, kCap))) << big;
  EXPECT_EQ(big["http_content_length"], std::to_string(kCap)) << big;
  EXPECT_EQ(big["x_crawler_content_length"], std::to_string(kBigSize)) << big;

  std::map<std::string, nlohmann::json> pages = Pages(out);
  for (const auto& [path, body] : served) {
    EXPECT_EQ(pages[path]["bytes"], body.size()) << pages[path];
    EXPECT_FALSE(pages[path].contains("body")) << pages[path];
    EXPECT_EQ(pages[path]["links_found"], 0) << pages[path];
  }
  EXPECT_EQ(pages["/big.bin"]["body"], "truncated") << pages["/big.bin"];
  EXPECT_EQ(pages["/big.bin"]["bytes"], kCap) << pages["/big.bin"];
  // Downloaded, never parsed: the PDF's link is not followed.
  EXPECT_EQ(Fetches("/hidden"), 0u);
  EXPECT_EQ(Fetches("/paper.pdf"), 1u);
}

TEST_F(CrawlNonHtmlTest, TruncateArchivesTheFirstBytesMarkedWithTheRealLength) {
  const fs::path out = Crawl("truncate", {"--warc", "--warc-non-html", "truncate"});
  std::map<std::string, nlohmann::json> responses = Responses(out);
  std::map<std::string, nlohmann::json> pages = Pages(out);
  const std::map<std::string, std::string> served = {
      {"/style.css", css_}, {"/app.js", js_}, {"/paper.pdf", pdf_}, {"/big.bin", ""}};
  for (const auto& [path, body] : served) {
    ASSERT_TRUE(responses.count(path)) << path;
    const nlohmann::json& r = responses[path];
    const uint64_t size = path == "/big.bin" ? kBigSize : body.size();
    const uint64_t kept = r["payload_length"];
    const std::string prefix = path == "/big.bin" ? BigBytes(0, kept) : body.substr(0, kept);
    EXPECT_EQ(r["payload_digest"], WarcSha1Digest(prefix)) << r;  // what came, as it came
    if (kept == size) {  // the whole body came with the first bytes (a small file)
      EXPECT_TRUE(r["truncated"].is_null()) << r;
      continue;
    }
    EXPECT_EQ(r["truncated"], "length") << r;
    EXPECT_EQ(r["http_content_length"], std::to_string(kept)) << r;
    EXPECT_EQ(r["x_crawler_content_length"], std::to_string(size)) << r;
    EXPECT_EQ(pages[path]["body"], "truncated") << pages[path];
    EXPECT_EQ(pages[path]["bytes"], kept) << pages[path];
  }
  // Larger than the first bytes of a transfer: these are cut.
  EXPECT_EQ(responses["/app.js"]["truncated"], "length");
  EXPECT_EQ(responses["/paper.pdf"]["truncated"], "length");
  EXPECT_EQ(responses["/big.bin"]["truncated"], "length");
  EXPECT_EQ(Fetches("/hidden"), 0u);
}

TEST_F(CrawlNonHtmlTest, WithoutWarcTheBodiesAreSkippedAndSaidSo) {
  const fs::path out = Crawl("skip", {});
  EXPECT_FALSE(fs::exists(out / "crawl.warc.gz"));
  std::map<std::string, nlohmann::json> pages = Pages(out);
  for (const std::string& path :
       std::vector<std::string>{"/style.css", "/app.js", "/paper.pdf", "/big.bin"}) {
    ASSERT_TRUE(pages.count(path)) << path;
    EXPECT_EQ(pages[path]["status"], 200) << pages[path];
    EXPECT_EQ(pages[path]["body"], "skipped") << pages[path];
    EXPECT_EQ(pages[path]["bytes"], 0) << pages[path];
    EXPECT_TRUE(pages[path]["error"].is_null()) << pages[path];  // not "body too large"
    EXPECT_EQ(Fetches(path), 1u) << path;
  }
  EXPECT_FALSE(pages["/"].contains("body"));
  // Not downloaded: the server produced a small part of the 64 MiB file (what the sockets' buffers
  // took before the crawler hung up), not the file.
  EXPECT_LT(big_generated_.load(), kBigSize / 4);
}

}  // namespace
}  // namespace urlsieve
