// A re-crawl (--recrawl, docs/features/recrawl.md "Re-crawl") of a small site on 127.0.0.1 whose
// pages change between two crawls: the answers are recorded as not modified / unchanged / changed,
// only changed pages have their links followed, the fetch records and counters follow, and the
// errors of a re-crawl that cannot be. (The full end-to-end tests, with conditional
// requests checked in the server's log and the WARC checked independently, are
// tests/crawler/crawl_recrawl_test.cc.)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/sqlite_db.h"
#include "crawler/crawl/crawler.h"
#include "crawler/deploy/deployment_factory.h"
#include "crawler/state/fetch_record.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

// Version 1: "/" links to /same, /validated, /changes, /goes. Version 2: /validated answers 304
// (a site cannot see the request's validators here: it answers 304 to any request, which only
// a re-fetch makes), /changes has new text and a link to /new, /goes is a 404.
class ChangingSite : public site::Site {
 public:
  std::atomic<int> version{1};

  // While held, a request for /changes waits for Release() (to stop a crawl at a known point).
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = true;
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      held_ = false;
    }
    released_.notify_all();
  }

  site::SiteResponse Handle(const site::SiteRequest& request) override {
    const std::string& r = request.resource;
    if (r == "/changes") {
      std::unique_lock<std::mutex> lock(mu_);
      released_.wait(lock, [this] { return !held_; });
    }
    if (r == "/") {
      return site::HtmlPage("home",
                            "<a href=/same>s</a> <a href=/validated>v</a> "
                            "<a href=/changes>c</a> <a href=/goes>g</a>");
    }
    if (r == "/same") {
      // Version 3: past the crawl's body cap (Config: 64 KiB).
      return site::HtmlPage("same",
                            version == 3 ? std::string(100 * 1024, 'x') : "always the same");
    }
    if (r == "/validated") {
      if (version == 2) {
        site::SiteResponse not_modified = site::PlainStatus(304, "");
        not_modified.body.clear();
        not_modified.headers.emplace_back("ETag", "\"v1\"");
        return not_modified;
      }
      site::SiteResponse page = site::HtmlPage("validated", "has an ETag");
      page.headers.emplace_back("ETag", "\"v1\"");
      page.headers.emplace_back("Last-Modified", "Sat, 21 Nov 2026 22:30:06 GMT");
      return page;
    }
    if (r == "/changes") {
      return version == 1 ? site::HtmlPage("changes", "first text")
                          : site::HtmlPage("changes", "second text <a href=/new>n</a>");
    }
    if (r == "/goes") {
      return version == 1 ? site::HtmlPage("goes", "here for now") : site::PlainStatus(404, "gone");
    }
    if (r == "/new" && version == 2) return site::HtmlPage("new", "a new page");
    return site::PlainStatus(404, "not found");
  }

 private:
  std::mutex mu_;
  std::condition_variable released_;
  bool held_ = false;  // guarded by mu_
};

class RecrawlSmokeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::StartSite([this](const std::vector<std::string>&) {
      auto created = std::make_unique<ChangingSite>();
      site_ = created.get();
      return created;
    });
    ASSERT_NE(server_, nullptr);
    std::ofstream(dir_.path() / "seeds.txt") << server_->Url("/") << "\n";
  }

  CrawlConfig Config() const {
    CrawlConfig c = testing::SmallCrawlConfig(dir_.path() / "seeds.txt", out(), 2);
    c.crawl.checkpoint_interval_s = 3600;  // only the final checkpoint
    c.politeness.delay_ms = 0;
    c.politeness.obey_robots = false;
    c.fetch.max_body_bytes = 64 * 1024;
    return c;
  }
  fs::path out() const { return dir_.path() / "out"; }

  Result<CrawlSummary> Crawl(const CrawlConfig& config) {
    Result<std::unique_ptr<Crawler>> crawler = OpenCrawler(config);
    if (!crawler.ok()) return crawler.status();
    return (*crawler)->Run();
  }

  // pages.jsonl's lines from line `from` on, by path.
  std::map<std::string, nlohmann::json> Pages(size_t from) const {
    std::ifstream in(out() / "pages.jsonl");
    std::map<std::string, nlohmann::json> pages;
    std::string line;
    for (size_t n = 0; std::getline(in, line); ++n) {
      if (n < from) continue;
      nlohmann::json page = nlohmann::json::parse(line);
      pages[page["url"].get<std::string>().substr(server_->origin().size())] = page;
    }
    return pages;
  }
  std::map<std::string, FetchRecord> Records() const {
    Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open((out() / "state" / "state.db").string());
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    std::map<std::string, FetchRecord> records;
    if (!db.ok()) return records;
    Result<std::vector<FetchRecord>> all = FetchRecordStore::ReadAll(**db);
    EXPECT_TRUE(all.ok()) << all.status().ToString();
    if (!all.ok()) return records;
    for (FetchRecord& r : *all) records[r.url.substr(server_->origin().size())] = r;
    return records;
  }

  testing::ScratchDir dir_{"urlsieve_recrawl_smoke"};
  std::unique_ptr<site::SiteServer> server_;
  ChangingSite* site_ = nullptr;
};

TEST_F(RecrawlSmokeTest, ARecrawlRecordsWhatChanged) {
  Result<CrawlSummary> first = Crawl(Config());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->stats.pages, 5u);
  std::map<std::string, FetchRecord> records = Records();
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records["/validated"].etag, "\"v1\"");
  EXPECT_EQ(records["/validated"].last_modified, "Sat, 21 Nov 2026 22:30:06 GMT");
  EXPECT_EQ(records["/same"].etag, "");
  EXPECT_EQ(records["/same"].payload_digest.substr(0, 5), "sha1:");
  EXPECT_EQ(records["/same"].interval_s, 7 * 24 * 3600) << "the default revisit_after";
  EXPECT_FALSE(records["/same"].queued);

  // Nothing is due a week early.
  CrawlConfig recrawl = Config();
  recrawl.crawl.recrawl = true;
  Result<CrawlSummary> early = Crawl(recrawl);
  ASSERT_TRUE(early.ok()) << early.status().ToString();
  EXPECT_EQ(early->stats.session_pages, 0u);

  site_->version = 2;
  server_->log().Clear();
  recrawl.recrawl.revisit_after = std::chrono::seconds(0);  // every fetched URL is due now
  Result<CrawlSummary> second = Crawl(recrawl);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->stats.session_pages, 6u) << "the 5 known pages and /new";
  EXPECT_EQ(server_->log().Count(0, "/same"), 1u);
  std::map<std::string, nlohmann::json> pages = Pages(5);
  ASSERT_EQ(pages.size(), 6u);
  EXPECT_EQ(pages["/validated"]["status"], 304);
  EXPECT_EQ(pages["/validated"]["not_modified"], true);
  EXPECT_EQ(pages["/validated"]["refetch"], "not_modified");
  EXPECT_EQ(pages["/same"]["refetch"], "unchanged");
  EXPECT_FALSE(pages["/same"].contains("not_modified"));
  EXPECT_EQ(pages["/"]["refetch"], "unchanged");
  EXPECT_EQ(pages["/"]["links_found"], 0) << "an unchanged page's links are not extracted";
  EXPECT_EQ(pages["/changes"]["refetch"], "changed");
  EXPECT_EQ(pages["/changes"]["links_new"], 1);
  EXPECT_EQ(pages["/goes"]["refetch"], "changed");
  EXPECT_EQ(pages["/goes"]["status"], 404);
  EXPECT_FALSE(pages["/new"].contains("refetch")) << "a first fetch";
  EXPECT_EQ(pages["/new"]["depth"], 2);

  EXPECT_EQ(second->stats.refetches["not_modified"], 1u);
  EXPECT_EQ(second->stats.refetches["unchanged"], 2u);
  EXPECT_EQ(second->stats.refetches["changed"], 2u);
  std::ifstream stats_file(out() / "stats.json");
  const nlohmann::json stats = nlohmann::json::parse(stats_file);
  EXPECT_EQ(stats["refetches"]["not_modified"], 1);
  EXPECT_EQ(stats["refetches"]["unchanged"], 2);
  EXPECT_EQ(stats["refetches"]["changed"], 2);
  EXPECT_EQ(stats["pages"], 11);

  records = Records();
  ASSERT_EQ(records.size(), 6u);
  const int64_t week = 7 * 24 * 3600;
  EXPECT_EQ(records["/validated"].interval_s, week * 3 / 2);
  EXPECT_EQ(records["/validated"].status, 200) << "a 304 keeps the original's status";
  EXPECT_EQ(records["/same"].interval_s, week * 3 / 2);
  EXPECT_EQ(records["/changes"].interval_s, week / 2);
  EXPECT_EQ(records["/goes"].status, 404);
  EXPECT_EQ(records["/new"].interval_s, 0) << "revisit_after 0: no interval";
  for (const auto& [path, record] : records) EXPECT_FALSE(record.queued) << path;
}

TEST_F(RecrawlSmokeTest, WithWarcTheSamePayloadsAreRevisitRecordsReferringToTheOriginals) {
  CrawlConfig config = Config();
  config.output.warc = true;
  ASSERT_TRUE(Crawl(config).ok());
  site_->version = 2;
  config.crawl.recrawl = true;
  config.recrawl.revisit_after = std::chrono::seconds(0);
  Result<CrawlSummary> second = Crawl(config);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  // The independent checker: syntax, digests, and each revisit's WARC-Refers-To naming a response
  // record of the file whose target, date and payload digest it repeats.
  const fs::path listing = dir_.path() / "warc.txt";
  const std::string command = "python3 " + std::string(URLSIEVE_SOURCE_DIR) +
                              "/tests/crawler/warc_check.py " + (out() / "crawl.warc.gz").string() +
                              " > " + listing.string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(listing).rdbuf();
  std::ifstream in(listing);
  std::map<std::string, std::vector<std::string>> by_type;
  std::string offset, type, uri;
  while (in >> offset >> type >> uri) {
    if (uri.starts_with(server_->origin())) uri.erase(0, server_->origin().size());
    by_type[type].push_back(uri);
  }
  std::vector<std::string> revisits = by_type["revisit"];
  std::sort(revisits.begin(), revisits.end());
  EXPECT_EQ(revisits, (std::vector<std::string>{"/", "/same", "/validated"}));
  EXPECT_EQ(by_type["response"].size(), 5u + 3u) << "the first crawl, /changes, /goes and /new";
  EXPECT_EQ(by_type["request"].size(), by_type["response"].size() + revisits.size());
  // The fetch records of the revisited pages still name their original response records.
  for (const auto& [path, record] : Records()) {
    EXPECT_FALSE(record.warc.record_id.empty()) << path;
  }
}

TEST_F(RecrawlSmokeTest, AStoppedRecrawlContinuesWithResume) {
  ASSERT_TRUE(Crawl(Config()).ok());
  site_->version = 2;
  CrawlConfig recrawl = Config();
  recrawl.crawl.recrawl = true;
  recrawl.crawl.threads = 1;
  recrawl.recrawl.revisit_after = std::chrono::seconds(0);
  // The due URLs are fetched oldest first, then by URL: "/", "/changes", "/goes", "/same",
  // "/validated". The stop comes while /changes is in flight.
  site_->Hold();
  server_->log().Clear();
  Result<std::unique_ptr<Crawler>> crawler = OpenCrawler(recrawl);
  ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
  std::thread stopper([&] {
    const bool reached = server_->log().WaitUntil(
        [](const std::vector<site::LoggedRequest>& log) {
          for (const site::LoggedRequest& request : log) {
            if (request.resource == "/changes") return true;
          }
          return false;
        },
        std::chrono::seconds(60));
    EXPECT_TRUE(reached);
    (*crawler)->RequestStop();
    site_->Release();
  });
  Result<CrawlSummary> stopped = (*crawler)->Run();
  stopper.join();
  ASSERT_TRUE(stopped.ok()) << stopped.status().ToString();
  EXPECT_TRUE(stopped->stopped);
  crawler->reset();
  std::map<std::string, FetchRecord> records = Records();
  EXPECT_FALSE(records["/"].queued);
  EXPECT_FALSE(records["/changes"].queued);
  EXPECT_TRUE(records["/goes"].queued);
  EXPECT_TRUE(records["/same"].queued);
  EXPECT_TRUE(records["/validated"].queued);

  // A second --recrawl would not queue them twice; --resume continues them.
  CrawlConfig resume = Config();
  resume.crawl.resume = true;
  Result<CrawlSummary> resumed = Crawl(resume);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  for (const auto& [path, record] : Records()) EXPECT_FALSE(record.queued) << path;
  EXPECT_EQ(resumed->stats.refetches["not_modified"], 1u);
  EXPECT_EQ(resumed->stats.refetches["unchanged"], 2u);
  EXPECT_EQ(resumed->stats.refetches["changed"], 2u);
  EXPECT_EQ(resumed->stats.pages, 11u) << "5 + each known page once + /new";
  EXPECT_EQ(server_->log().Count(0, "/same"), 1u);
  EXPECT_EQ(server_->log().Count(0, "/new"), 1u);
}

TEST_F(RecrawlSmokeTest, AReFetchWithNothingToRecordKeepsItsRecordAndIsNotQueuedAgain) {
  ASSERT_TRUE(Crawl(Config()).ok());
  const FetchRecord before = Records()["/same"];
  site_->version = 3;
  CrawlConfig recrawl = Config();
  recrawl.crawl.recrawl = true;
  recrawl.recrawl.revisit_after = std::chrono::seconds(0);
  Result<CrawlSummary> second = Crawl(recrawl);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  const std::map<std::string, nlohmann::json> pages = Pages(5);
  ASSERT_TRUE(pages.contains("/same"));
  EXPECT_NE(pages.at("/same")["error"], nullptr) << "the body passed the cap";
  std::map<std::string, FetchRecord> records = Records();
  EXPECT_FALSE(records["/same"].queued);
  EXPECT_EQ(records["/same"].fetch_time, before.fetch_time);
  EXPECT_EQ(records["/same"].payload_digest, before.payload_digest);
  EXPECT_EQ(records["/same"].interval_s, before.interval_s);
}

TEST_F(RecrawlSmokeTest, ARecrawlOfADirectoryWithoutACrawlIsAnError) {
  CrawlConfig recrawl = Config();
  recrawl.crawl.recrawl = true;
  Result<CrawlSummary> summary = Crawl(recrawl);
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(summary.status().message().find("holds no crawl"), std::string::npos)
      << summary.status().ToString();
  EXPECT_FALSE(fs::exists(out() / "state" / "state.db"));
}

TEST_F(RecrawlSmokeTest, ARecrawlOfAClusterNodeIsValid) {
  // Its due records are the cluster's (tests/crawler/crawl_cluster_recrawl_test.cc).
  CrawlConfig recrawl = Config();
  recrawl.crawl.recrawl = true;
  recrawl.cluster.url = "redis://127.0.0.1:1";
  recrawl.cluster.name = "c";
  recrawl.politeness.delay_ms = 0;
  EXPECT_TRUE(recrawl.Validate().ok()) << recrawl.Validate().ToString();
}

}  // namespace
}  // namespace urlsieve
