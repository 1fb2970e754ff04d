// The content-seen test in a crawl (docs/features/content-seen.md, "In the crawl"): `urlsieve
// crawl` over DustSite (tools/site_server/dust_site.h), a small application whose pages are
// reached under several URLs: pages.jsonl names each duplicate's first copy, stats.json counts
// them, the WARC archives an exact duplicate as a revisit of the first copy's response (checked by
// tests/crawler/warc_check.py, which follows every reference), --duplicate-links decides whether a
// duplicate's links are followed, and the set outlives a run (--resume).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/dust_site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::DustSite;
using site::DustSiteOptions;
using testing::CrawlChild;
using testing::ReadJsonl;

constexpr int kPages = 6;

std::string Field(const nlohmann::json& record, const char* key) {
  return record.contains(key) && record[key].is_string() ? record[key].get<std::string>() : "";
}

class CrawlContentSeenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DustSiteOptions options;
    options.pages = kPages;
    server_ = testing::StartSite(
        [&](const std::vector<std::string>&) { return std::make_unique<DustSite>(options); });
    ASSERT_NE(server_, nullptr);
    testing::WriteSeeds(dir_.path() / "seeds.txt", {server_->Url("/")});
    testing::WriteChildCrawlToml(dir_.path() / "crawl.toml", /*progress=*/false);
  }

  fs::path Out() const { return dir_.path() / "out"; }
  std::string Url(const std::string& path) const { return server_->Url(path); }

  // One fetcher: the site's one host is then fetched in link order, so "first" is known.
  int Crawl(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--seeds",
                                     (dir_.path() / "seeds.txt").string(),
                                     "--out",
                                     Out().string(),
                                     "--threads",
                                     "1",
                                     "--delay-ms",
                                     "0",
                                     "--warc",
                                     "--config",
                                     (dir_.path() / "crawl.toml").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    CrawlChild crawl(dir_.path() / "crawl.err", args);
    const int code = crawl.Wait();
    EXPECT_EQ(code, 0) << crawl.err();
    return code;
  }

  std::map<std::string, nlohmann::json> PagesByUrl() const {
    std::map<std::string, nlohmann::json> pages;
    for (nlohmann::json& page : ReadJsonl(Out() / "pages.jsonl")) {
      const std::string url = Field(page, "url");
      EXPECT_FALSE(pages.count(url)) << "fetched twice: " << page;
      pages[url] = std::move(page);
    }
    return pages;
  }

  std::vector<nlohmann::json> WarcRecords() const {
    const fs::path listing = dir_.path() / "records.jsonl";
    const std::string command = "python3 " + std::string(URLSIEVE_SOURCE_DIR) +
                                "/tests/crawler/warc_records.py " +
                                (Out() / "crawl.warc.gz").string() + " > " + listing.string();
    EXPECT_EQ(std::system(command.c_str()), 0);
    return ReadJsonl(listing);
  }

  // The independent checker: every revisit's WARC-Refers-To names a response record with the same
  // target URI, date and payload digest.
  void ExpectWarcChecks() const {
    const fs::path report = dir_.path() / "check.txt";
    const std::string command =
        "python3 " + std::string(URLSIEVE_SOURCE_DIR) + "/tests/crawler/warc_check.py " +
        (Out() / "crawl.warc.gz").string() + " > " + report.string() + " 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << testing::ReadFile(report);
  }

  testing::ScratchDir dir_{"crawl_content_seen"};
  std::unique_ptr<site::SiteServer> server_;
};

TEST_F(CrawlContentSeenTest, NamesTheFirstCopyOfEachExactAndNearDuplicate) {
  ASSERT_EQ(Crawl({}), 0);
  std::map<std::string, nlohmann::json> pages = PagesByUrl();

  // The mirror's first page is the docs' first page, byte for byte; its links are not followed
  // (the default --duplicate-links skip), so the mirror's other pages are never fetched.
  const std::string mirror = Url("/mirror/docs/page0.html");
  ASSERT_TRUE(pages.count(mirror));
  EXPECT_EQ(Field(pages[mirror], "duplicate_of"), Url("/docs/page0.html")) << pages[mirror];
  EXPECT_EQ(pages[mirror]["links_found"], 0) << pages[mirror];
  for (int i = 1; i < kPages; ++i) {
    EXPECT_FALSE(pages.count(Url("/mirror/docs/page" + std::to_string(i) + ".html")));
    EXPECT_TRUE(pages.count(Url("/docs/page" + std::to_string(i) + ".html")));
  }
  EXPECT_EQ(Field(pages[Url("/copy.css")], "duplicate_of"), Url("/style.css"));

  // A session token, a login form's hidden return address: near duplicates of the first.
  for (int i = 0; i < kPages; ++i) {
    SCOPED_TRACE(i);
    const std::string article = "/article/" + std::to_string(i);
    const nlohmann::json& second = pages[Url(article + "?sid=2")];
    EXPECT_EQ(Field(second, "near_duplicate_of"), Url(article + "?sid=1")) << second;
    EXPECT_LE(second["distance"].get<int>(), 3) << second;
    EXPECT_FALSE(second.contains("duplicate_of")) << second;
    EXPECT_FALSE(pages[Url(article + "?sid=1")].contains("near_duplicate_of"));
    if (i > 0) {
      const nlohmann::json& login =
          pages[Url("/login?return=/docs/page" + std::to_string(i) + ".html")];
      EXPECT_EQ(Field(login, "near_duplicate_of"), Url("/login?return=/docs/page0.html")) << login;
    }
  }
  // Distinct pages are nobody's duplicate.
  for (int i = 0; i < kPages; ++i) {
    const nlohmann::json& page = pages[Url("/docs/page" + std::to_string(i) + ".html")];
    EXPECT_FALSE(page.contains("duplicate_of") || page.contains("near_duplicate_of")) << page;
  }

  // stats.json counts what pages.jsonl says.
  uint64_t exact = 0, near = 0;
  for (const auto& [url, page] : pages) {
    exact += page.contains("duplicate_of");
    near += page.contains("near_duplicate_of");
  }
  const nlohmann::json stats = nlohmann::json::parse(testing::ReadFile(Out() / "stats.json"));
  EXPECT_EQ(stats["duplicates"]["exact"], exact) << stats["duplicates"];
  EXPECT_EQ(stats["duplicates"]["near"], near) << stats["duplicates"];
  EXPECT_EQ(exact, 2u);
  EXPECT_EQ(near, static_cast<uint64_t>(2 * kPages - 1));
}

TEST_F(CrawlContentSeenTest, AnExactDuplicateIsArchivedAsARevisitOfTheFirstCapture) {
  ASSERT_EQ(Crawl({}), 0);
  ExpectWarcChecks();
  std::map<std::string, nlohmann::json> responses, revisits;  // by target URI
  for (const nlohmann::json& r : WarcRecords()) {
    if (r["type"] == "response") responses[Field(r, "target")] = r;
    if (r["type"] == "revisit") revisits[Field(r, "target")] = r;
  }
  for (const auto& [copy, first] : std::map<std::string, std::string>{
           {"/mirror/docs/page0.html", "/docs/page0.html"}, {"/copy.css", "/style.css"}}) {
    SCOPED_TRACE(copy);
    ASSERT_TRUE(revisits.count(Url(copy)));
    ASSERT_TRUE(responses.count(Url(first)));
    const nlohmann::json& revisit = revisits[Url(copy)];
    EXPECT_TRUE(Field(revisit, "profile").ends_with("/revisit/identical-payload-digest"));
    EXPECT_EQ(revisit["refers_to"], responses[Url(first)]["id"]);
    EXPECT_EQ(revisit["refers_to_target"], Url(first));
    EXPECT_EQ(revisit["refers_to_date"], responses[Url(first)]["date"]);
    EXPECT_EQ(revisit["payload_digest"], responses[Url(first)]["payload_digest"]);
    EXPECT_FALSE(responses.count(Url(copy)));
  }
  // A near duplicate is archived in full.
  EXPECT_TRUE(responses.count(Url("/article/0?sid=2")));
}

TEST_F(CrawlContentSeenTest, DuplicateLinksFollowCrawlsTheMirrorAndMarksEveryPageOfIt) {
  ASSERT_EQ(Crawl({"--duplicate-links", "follow"}), 0);
  std::map<std::string, nlohmann::json> pages = PagesByUrl();
  for (int i = 0; i < kPages; ++i) {
    const std::string page = "/docs/page" + std::to_string(i) + ".html";
    ASSERT_TRUE(pages.count(Url("/mirror" + page))) << page;
    EXPECT_EQ(Field(pages[Url("/mirror" + page)], "duplicate_of"), Url(page));
  }
  ExpectWarcChecks();
}

TEST_F(CrawlContentSeenTest, NearDuplicateLinksSkipFollowsNoLinkOfANearDuplicate) {
  ASSERT_EQ(Crawl({"--near-duplicate-links", "skip"}), 0);
  std::map<std::string, nlohmann::json> pages = PagesByUrl();
  const nlohmann::json& second = pages[Url("/article/0?sid=2")];
  ASSERT_TRUE(second.contains("near_duplicate_of")) << second;
  EXPECT_EQ(second["links_found"], 0) << second;
  EXPECT_GT(pages[Url("/article/0?sid=1")]["links_found"].get<int>(), 0);
}

TEST_F(CrawlContentSeenTest, WithoutTheTestNothingIsMarkedAndTheMirrorIsCrawled) {
  ASSERT_EQ(Crawl({"--no-content-seen"}), 0);
  std::map<std::string, nlohmann::json> pages = PagesByUrl();
  for (const auto& [url, page] : pages) {
    EXPECT_FALSE(page.contains("duplicate_of") || page.contains("near_duplicate_of")) << page;
  }
  EXPECT_TRUE(pages.count(Url("/mirror/docs/page" + std::to_string(kPages - 1) + ".html")));
  const nlohmann::json stats = nlohmann::json::parse(testing::ReadFile(Out() / "stats.json"));
  EXPECT_EQ(stats["duplicates"]["exact"], 0);
}

TEST_F(CrawlContentSeenTest, NoNearDuplicatesFindsExactDuplicatesOnly) {
  ASSERT_EQ(Crawl({"--no-near-duplicates"}), 0);
  std::map<std::string, nlohmann::json> pages = PagesByUrl();
  for (const auto& [url, page] : pages) EXPECT_FALSE(page.contains("near_duplicate_of")) << page;
  EXPECT_EQ(Field(pages[Url("/mirror/docs/page0.html")], "duplicate_of"), Url("/docs/page0.html"));
}

TEST_F(CrawlContentSeenTest, TheSetOutlivesARunAndADuplicateRefersToTheEarlierRunsCapture) {
  // The first run fetches the docs' first page only; the second (--resume, whose seeds are offered
  // to the seen stage again) is given the mirror's.
  testing::WriteSeeds(dir_.path() / "seeds.txt", {Url("/docs/page0.html")});
  ASSERT_EQ(Crawl({"--max-depth", "0"}), 0);
  ASSERT_EQ(ReadJsonl(Out() / "pages.jsonl").size(), 1u);
  testing::WriteSeeds(dir_.path() / "seeds.txt", {Url("/mirror/docs/page0.html")});
  ASSERT_EQ(Crawl({"--max-depth", "0", "--resume"}), 0);
  std::map<std::string, nlohmann::json> pages = PagesByUrl();
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_EQ(Field(pages[Url("/mirror/docs/page0.html")], "duplicate_of"), Url("/docs/page0.html"));
  ExpectWarcChecks();
  size_t revisits = 0;
  for (const nlohmann::json& r : WarcRecords()) revisits += r["type"] == "revisit";
  EXPECT_EQ(revisits, 1u);
}

}  // namespace
}  // namespace urlsieve
