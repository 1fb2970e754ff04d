// A crawl reads each page in its own encoding (docs/features/encodings.md, "Character encodings"):
// pages in GBK, windows-1251, windows-1252, UTF-16 and Shift_JIS link to pages with non-ASCII
// paths, served by a SiteServer on 127.0.0.1. The server's log shows the paths requested (a page
// misread as UTF-8 requests /%EF%BF%BD...), pages.jsonl and stats.json the encoding each page was
// read in. The encoded bytes below are Python's ('页面'.encode('gbk') ...), not the decoder's.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "crawler/config/crawl_config.h"
#include "crawler/crawl/crawler.h"
#include "tests/crawler/crawl_watchdog.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

using site::LoggedRequest;
using site::SiteResponse;
using site::SiteServer;

// Pages by resource, each with its Content-Type; anything else is a 404.
class EncodedSite : public site::Site {
 public:
  explicit EncodedSite(std::map<std::string, SiteResponse> pages) : pages_(std::move(pages)) {}
  SiteResponse Handle(const site::SiteRequest& request) override {
    const auto it = pages_.find(request.resource);
    return it != pages_.end() ? it->second : site::PlainStatus(404, "not found");
  }

 private:
  const std::map<std::string, SiteResponse> pages_;
};

SiteResponse Page(std::string content_type, std::string body) {
  SiteResponse response;
  response.content_type = std::move(content_type);
  response.body = std::move(body);
  return response;
}

// UTF-16LE with a BOM, from the compiler's own UTF-16 (u"" literals).
std::string Utf16LeWithBom(std::u16string_view text) {
  std::string bytes = "\xFF\xFE";
  for (char16_t unit : text) {
    bytes += static_cast<char>(unit & 0xFF);
    bytes += static_cast<char>(unit >> 8);
  }
  return bytes;
}

class CrawlPageEncodingTest : public ::testing::Test {
 protected:
  CrawlPageEncodingTest() : dir_("urlsieve_page_encoding") {}

  void StartSite(std::map<std::string, SiteResponse> pages) {
    server_ = testing::StartSite([&](const std::vector<std::string>&) {
      return std::make_unique<EncodedSite>(std::move(pages));
    });
    ASSERT_NE(server_, nullptr);
    std::ofstream(dir_.path() / "seeds.txt") << server_->Url("/") << "\n";
  }

  CrawlConfig Config() const {
    CrawlConfig c = testing::SmallCrawlConfig(dir_.path() / "seeds.txt", dir_.path() / "out", 2);
    c.politeness.delay_ms = 0;
    c.politeness.obey_robots = false;
    c.fetch.timeout_ms = 5000;
    return c;
  }

  std::set<std::string> Requested() const {
    std::set<std::string> resources;
    for (const LoggedRequest& r : server_->log().Snapshot()) resources.insert(r.resource);
    return resources;
  }

  // pages.jsonl: URL path -> the "encoding" recorded ("" when absent).
  std::map<std::string, std::string> RecordedEncodings() const {
    std::map<std::string, std::string> encodings;
    std::ifstream in(dir_.path() / "out" / "pages.jsonl");
    const std::string origin = server_->Url("");
    std::string line;
    while (std::getline(in, line)) {
      const nlohmann::json j = nlohmann::json::parse(line);
      std::string url = j.at("url").get<std::string>();
      if (url.compare(0, origin.size(), origin) == 0) url = url.substr(origin.size());
      encodings[url] = j.value("encoding", "");
    }
    return encodings;
  }

  testing::ScratchDir dir_;
  std::unique_ptr<SiteServer> server_;
};

TEST_F(CrawlPageEncodingTest, EachPageIsReadInItsEncodingAndItRecordsIt) {
  std::map<std::string, SiteResponse> pages;
  pages["/"] = Page("text/html; charset=utf-8",
                    "<a href=/gbk.html>GBK</a> <a href=/meta.html>meta</a> "
                    "<a href=/plain.html>none</a> <a href=/utf16.html>UTF-16</a> "
                    "<a href=/disagree.html>both</a>");
  // GBK by the HTTP charset: 页面 = D2 B3 C3 E6.
  pages["/gbk.html"] =
      Page("text/html; charset=gb2312", "<a href=\"/\xD2\xB3\xC3\xE6.html\">\xD2\xB3\xC3\xE6</a>");
  // windows-1251 by <meta http-equiv>: страница = F1 F2 F0 E0 ED E8 F6 E0.
  pages["/meta.html"] =
      Page("text/html",
           "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\">"
           "<a href=\"/\xF1\xF2\xF0\xE0\xED\xE8\xF6\xE0.html\">x</a>");
  // No declaration: the default, windows-1252: café = 63 61 66 E9.
  pages["/plain.html"] = Page("text/html", "<a href=\"/caf\xE9.html\">x</a>");
  // UTF-16LE with a BOM and no charset anywhere.
  pages["/utf16.html"] =
      Page("text/html", Utf16LeWithBom(u"<a href=\"/\u9875\u9762-16.html\">x</a>"));
  // HTTP says Shift_JIS, the meta says GBK: HTTP wins. 日本 = 93 FA 96 7B in Shift_JIS.
  pages["/disagree.html"] = Page("text/html; charset=Shift_JIS",
                                 "<meta charset=gbk><a href=\"/\x93\xFA\x96\x7B.html\">x</a>");
  for (const char* target :
       {"/页面.html", "/страница.html", "/café.html", "/页面-16.html", "/日本.html"}) {
    pages[target] = Page("text/html; charset=utf-8", "<p>found</p>");
  }
  StartSite(std::move(pages));

  Result<CrawlSummary> summary = testing::RunCrawlWithWatchdog(Config());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_FALSE(summary->stopped);

  const std::set<std::string> requested = Requested();
  for (const char* target :
       {"/页面.html", "/страница.html", "/café.html", "/页面-16.html", "/日本.html"}) {
    EXPECT_EQ(requested.count(target), 1u) << target << " was not requested";
  }
  for (const std::string& resource : requested) {
    EXPECT_EQ(resource.find("\xEF\xBF\xBD"), std::string::npos) << "U+FFFD in " << resource;
  }
  EXPECT_EQ(requested.size(), 11u);

  const std::map<std::string, std::string> recorded = RecordedEncodings();
  EXPECT_EQ(recorded.at("/"), "UTF-8");
  EXPECT_EQ(recorded.at("/gbk.html"), "GBK");
  EXPECT_EQ(recorded.at("/meta.html"), "windows-1251");
  EXPECT_EQ(recorded.at("/plain.html"), "windows-1252");
  EXPECT_EQ(recorded.at("/utf16.html"), "UTF-16LE");
  EXPECT_EQ(recorded.at("/disagree.html"), "Shift_JIS");
  EXPECT_EQ(summary->stats.encodings.at("UTF-8"), 6u);  // "/" and the five targets
  EXPECT_EQ(summary->stats.encodings.at("GBK"), 1u);
  EXPECT_EQ(summary->stats.encodings.at("Shift_JIS"), 1u);
}

TEST_F(CrawlPageEncodingTest, TheDefaultEncodingOptionReadsUndeclaredPages) {
  std::map<std::string, SiteResponse> pages;
  // No declaration at all; the bytes are Shift_JIS (日本 = 93 FA 96 7B).
  pages["/"] = Page("text/html", "<a href=\"/\x93\xFA\x96\x7B.html\">x</a>");
  pages["/日本.html"] = Page("text/html", "<p>found</p>");
  StartSite(std::move(pages));

  CrawlConfig config = Config();
  config.crawl.default_encoding = "x-sjis";
  Result<CrawlSummary> summary = testing::RunCrawlWithWatchdog(config);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(Requested(), (std::set<std::string>{"/", "/日本.html"}));
  EXPECT_EQ(RecordedEncodings().at("/"), "Shift_JIS");
}

TEST(CrawlDefaultEncodingOptionTest, AnUnknownLabelIsAnErrorNamingTheOption) {
  CrawlConfig config;
  config.crawl.seeds = "seeds.txt";
  config.crawl.default_encoding = "klingon";
  Status status = config.Validate();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("crawl.default_encoding"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("klingon"), std::string::npos) << status.message();
  config.crawl.default_encoding = "utf-16";
  status = config.Validate();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("UTF-16LE"), std::string::npos) << status.message();
  config.crawl.default_encoding = " Latin1 ";
  EXPECT_TRUE(config.Validate().ok()) << config.Validate().ToString();
  CrawlFlags flags;
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    if (spec.flag == "--default-encoding") flags.given.emplace_back(&spec, std::string("gbkk"));
  }
  ASSERT_EQ(flags.given.size(), 1u);
  Result<CrawlConfig> resolved = ResolveCrawlConfig(flags);
  ASSERT_FALSE(resolved.ok());
  EXPECT_NE(resolved.status().message().find("crawl.default_encoding"), std::string::npos);
}

}  // namespace
}  // namespace urlsieve
