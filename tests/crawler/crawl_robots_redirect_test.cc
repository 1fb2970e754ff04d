// End-to-end crawls of a host whose robots.txt redirects (RFC 9309 §2.3.1.2), served by
// tools/site_server (StaticSite and its _redirects table) on 127.0.0.1. The crawler follows up to
// five hops, each one a robots lease of the frontier spaced by the host's delay like any request,
// and takes a longer chain as unreachable (§2.3.1.4). Assertions come from the server's log.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "crawler/crawl/crawler.h"
#include "tests/crawler/crawl_watchdog.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/site_server.h"
#include "tools/site_server/static_site.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::LoggedRequest;
using site::SiteServer;
using site::StaticSite;

constexpr int kDelayMs = 40;

class CrawlRobotsRedirectTest : public ::testing::Test {
 protected:
  CrawlRobotsRedirectTest() : dir_("urlsieve_robots_redirect") {}

  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_.path() / "site" / name) << text;
  }

  // A four-page site whose /robots.txt redirects `hops` times (/hop1, /hop2, ... with varied
  // statuses) before it reaches /rules.txt, which disallows /secret.html.
  void StartSite(int hops) {
    fs::create_directories(dir_.path() / "site");
    Write("index.html", "<a href=a.html>a</a> <a href=secret.html>secret</a>");
    Write("a.html", "<a href=b.html>b</a>");
    Write("b.html", "<a href=index.html>home</a>");
    Write("secret.html", "<a href=b.html>b</a>");
    Write("rules.txt", "User-agent: *\nDisallow: /secret.html\n");
    const char* statuses[] = {"301", "302", "307", "308", "303"};
    std::string redirects;
    for (int i = 0; i < hops; ++i) {
      redirects += (i == 0 ? "/robots.txt" : "/hop" + std::to_string(i)) + " " +
                   (i + 1 == hops ? "/rules.txt" : "/hop" + std::to_string(i + 1)) + " " +
                   statuses[i % 5] + "\n";
    }
    Write("_redirects", redirects);
    server_ = testing::StartSite(
        [&](const std::vector<std::string>&) { return StaticSite::Open(dir_.path() / "site"); });
    ASSERT_NE(server_, nullptr);
    std::ofstream(dir_.path() / "seeds.txt") << server_->Url("/index.html") << "\n";
  }

  CrawlConfig Config() const {
    CrawlConfig c = testing::SmallCrawlConfig(dir_.path() / "seeds.txt", dir_.path() / "out", 3);
    c.politeness.delay_ms = kDelayMs;
    c.politeness.backoff_ms = 50;
    c.politeness.robots_retries = 0;
    c.fetch.timeout_ms = 5000;
    c.fetch.connect_timeout_ms = 2000;
    return c;
  }

  // Runs a crawl in this process (crawl_watchdog.h).
  CrawlSummary Crawl(const CrawlConfig& config) {
    Result<CrawlSummary> summary = testing::RunCrawlWithWatchdog(config);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    return summary.ok() ? *summary : CrawlSummary{};
  }

  std::vector<std::string> Requested() const {
    std::vector<std::string> resources;
    for (const LoggedRequest& r : server_->log().Snapshot()) resources.push_back(r.resource);
    return resources;
  }

  // Invariant 3: no two requests to the host closer than its delay, redirect hops included.
  void ExpectPolite() const {
    const std::vector<LoggedRequest> log = server_->log().Snapshot();
    for (size_t i = 1; i < log.size(); ++i) {
      EXPECT_GE(log[i].time - log[i - 1].time, std::chrono::milliseconds(kDelayMs))
          << log[i - 1].resource << " then " << log[i].resource;
    }
  }

  static uint64_t Rejections(const CrawlSummary& summary, const std::string& reason) {
    const auto it = summary.stats.rejections.find(reason);
    return it == summary.stats.rejections.end() ? 0 : it->second;
  }

  testing::ScratchDir dir_;
  std::unique_ptr<SiteServer> server_;
};

TEST_F(CrawlRobotsRedirectTest, FiveHopsAreFollowedPolitelyAndTheirRulesObeyed) {
  StartSite(5);
  const CrawlSummary summary = Crawl(Config());
  EXPECT_FALSE(summary.stopped);
  const std::vector<std::string> requested = Requested();
  // The chain first, in order, before any page; then every allowed page once.
  ASSERT_GE(requested.size(), 6u);
  EXPECT_EQ(
      std::vector<std::string>(requested.begin(), requested.begin() + 6),
      (std::vector<std::string>{"/robots.txt", "/hop1", "/hop2", "/hop3", "/hop4", "/rules.txt"}));
  std::map<std::string, int> pages;
  for (size_t i = 6; i < requested.size(); ++i) ++pages[requested[i]];
  EXPECT_EQ(pages,
            (std::map<std::string, int>{{"/index.html", 1}, {"/a.html", 1}, {"/b.html", 1}}));
  EXPECT_EQ(summary.stats.pages, 3u);
  EXPECT_EQ(Rejections(summary, "robots_disallowed"), 1u);  // /secret.html
  ExpectPolite();
}

TEST_F(CrawlRobotsRedirectTest, ASixthRedirectMakesRobotsUnreachable) {
  StartSite(6);
  const CrawlSummary summary = Crawl(Config());  // robots_retries = 0: one chain, then give up
  EXPECT_FALSE(summary.stopped);
  // Six requests of the chain (the sixth answer is one redirect too many), and no page.
  EXPECT_EQ(Requested(),
            (std::vector<std::string>{"/robots.txt", "/hop1", "/hop2", "/hop3", "/hop4", "/hop5"}));
  EXPECT_EQ(summary.stats.pages, 0u);
  EXPECT_EQ(Rejections(summary, "robots_unreachable"), 1u);  // the seed
  ExpectPolite();
}

}  // namespace
}  // namespace urlsieve
