// End-to-end crawls of the generated trap site (tools/site_server) on 127.0.0.1. Every assertion
// about what was fetched is made from the server's own request log.
#include "crawler/crawl/crawler.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "crawler/deploy/deployment_factory.h"
#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tools/site_server/generated_site.h"
#include "tools/site_server/map_site.h"
#include "tools/site_server/site_server.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::GeneratedSite;
using site::LoggedRequest;
using testing::IsRobots;
using testing::ReadFile;

constexpr int kHosts = 4;
constexpr int kDelayMs = 40;

class CrawlerTest : public testing::CrawlTest {
 protected:
  CrawlerTest() : CrawlTest("urlsieve_crawl") {}

  void SetUp() override {
    site::GeneratedSiteOptions gen = testing::TrapSiteOptions(std::chrono::milliseconds(3000));
    server_ = testing::StartGeneratedSite(gen, kHosts, &site_);
    ASSERT_NE(server_, nullptr);

    std::ofstream seeds(Seeds());
    seeds << "# the main host; it links to the satellites\n" << server_->Url("/") << "\n";
  }

  CrawlConfig Config() const { return testing::TrapCrawlConfig(Seeds(), Out(), 4, kDelayMs); }

  // Every crawl invariant checkable from the server's side. A crawl restarted (--resume) after log
  // entry `restart_at` keeps no politeness memory across the restart, so spacing is checked within
  // each run.
  void ExpectCorrectCrawl(size_t allowed_duplicates, size_t restart_at = SIZE_MAX) {
    const std::vector<LoggedRequest> log = server_->log().Snapshot();
    std::map<std::pair<int, std::string>, int> count;
    std::map<std::pair<int, bool>, std::vector<std::chrono::steady_clock::time_point>> starts;
    for (size_t i = 0; i < log.size(); ++i) {
      ++count[{log[i].host, log[i].resource}];
      starts[{log[i].host, i >= restart_at}].push_back(log[i].time);
    }
    size_t duplicates = 0;
    for (int h = 0; h < kHosts; ++h) {
      const site::HostExpectations& expect = site_->expectations(h);
      for (const std::string& resource : expect.must_fetch) {
        EXPECT_GE((count[{h, resource}]), 1) << "host " << h << " never fetched " << resource;
      }
      for (const std::string& resource : expect.must_not_fetch) {
        EXPECT_EQ((count[{h, resource}]), 0) << "host " << h << " fetched " << resource;
      }
      for (const auto& [key, n] : count) {
        if (key.first != h || expect.may_repeat.count(key.second)) continue;
        if (IsRobots(key.second)) continue;  // refetched after a 5xx or a restart, by design
        if (n > 1) duplicates += n - 1;
        EXPECT_LE(n, 1 + static_cast<int>(allowed_duplicates))
            << "host " << h << " fetched " << key.second << " " << n << " times";
      }
      // Politeness (invariant 3, docs/architecture.md, "Invariants"): the server saw no two
      // requests closer than the delay.
      for (bool resumed : {false, true}) {
        std::vector<std::chrono::steady_clock::time_point>& t = starts[{h, resumed}];
        std::sort(t.begin(), t.end());
        for (size_t i = 1; i < t.size(); ++i) {
          EXPECT_GE(t[i] - t[i - 1], std::chrono::milliseconds(kDelayMs))
              << "host " << h << " requests " << i - 1 << " and " << i;
        }
      }
    }
    EXPECT_LE(duplicates, allowed_duplicates);
  }

  std::vector<nlohmann::json> ReadJsonl(const std::string& name) const { return ReadOutput(name); }

  // Runs `urlsieve crawl` as a child process with the test's configuration.
  std::unique_ptr<testing::CrawlChild> SpawnCrawl(bool resume, int threads) const {
    return testing::SpawnCheckpointingCrawl(Dir(), Out(), resume, threads, kDelayMs);
  }

  GeneratedSite* site_ = nullptr;
};

TEST_F(CrawlerTest, CrawlsTheTrapSiteOnceEachPolitelyAndEnds) {
  auto crawler = OpenCrawler(Config());
  ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
  auto summary = (*crawler)->Run();
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_FALSE(summary->stopped);
  EXPECT_EQ(summary->pending, 0u);
  ExpectCorrectCrawl(0);

  // pages.jsonl: one valid line per page fetch, and the stats agree.
  const std::vector<nlohmann::json> pages = ReadJsonl("pages.jsonl");
  EXPECT_EQ(pages.size(), summary->stats.pages);
  size_t robots = 0;
  for (const LoggedRequest& r : server_->log().Snapshot()) robots += IsRobots(r.resource);
  EXPECT_EQ(pages.size() + robots, server_->log().size());
  for (const nlohmann::json& page : pages) {
    ASSERT_TRUE(page.contains("url") && page.contains("status") && page.contains("depth"));
    if (page["depth"] != 0) {
      EXPECT_TRUE(page["parent"].is_string()) << page.dump();
    }
  }
  // The calendar trap was cut by the depth limit, and the cut was counted.
  EXPECT_GT(summary->stats.rejections.count("scope-depth"), 0u);
  EXPECT_TRUE(fs::exists(Out() / "stats.json"));
}

TEST_F(CrawlerTest, OptInCanonicalizationRulesChangeTheKeyNotTheUrlFetched) {
  CrawlConfig config = Config();
  config.canonicalize.sort_query = true;
  config.canonicalize.strip_session_ids = true;
  config.canonicalize.collapse_slashes = true;
  auto crawler = OpenCrawler(config);
  ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
  auto summary = (*crawler)->Run();
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ExpectCorrectCrawl(0);
}

TEST_F(CrawlerTest, ASecondRunOfAFinishedCrawlNeedsResumeAndFetchesNothingNew) {
  {
    auto crawler = OpenCrawler(Config());
    ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
    ASSERT_TRUE((*crawler)->Run().ok());
  }
  auto again = OpenCrawler(Config());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);

  const size_t before = server_->log().size();
  CrawlConfig resume = Config();
  resume.crawl.resume = true;
  auto crawler = OpenCrawler(resume);
  ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
  ASSERT_TRUE((*crawler)->Run().ok());
  EXPECT_EQ(server_->log().size(), before);  // everything was seen already
}

// The crawl's state directory is locked like any other (dedup/state/state_lock.h): a second crawler
// on the same --out is refused, naming the holder.
TEST_F(CrawlerTest, ASecondCrawlerOnTheSameOutputIsRefused) {
  auto first = OpenCrawler(Config());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  CrawlConfig resume = Config();
  resume.crawl.resume = true;
  auto second = OpenCrawler(resume);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("in use by process " + std::to_string(::getpid())),
            std::string::npos)
      << second.status().message();
}

// Issue 10: a crawl whose state.db was empty or missing started afresh, refetched everything and
// discarded its pages.jsonl. Now that is an error and nothing is touched; a lost Bloom snapshot
// of an exact crawl is rebuilt only on request (--rebuild).
TEST_F(CrawlerTest, ALostOrEmptyStateIsAnErrorAndARebuildIsOnlyOnRequest) {
  CrawlConfig config = Config();
  config.crawl.exact = true;
  {
    auto crawler = OpenCrawler(config);
    ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
    ASSERT_TRUE((*crawler)->Run().ok());
  }
  const fs::path out = Out(), state = out / "state";
  const std::string pages = ReadFile(out / "pages.jsonl");
  ASSERT_FALSE(pages.empty());
  const size_t fetched = server_->log().size();
  CrawlConfig resume = config;
  resume.crawl.resume = true;

  // The snapshot is lost: an error that says how to rebuild it, then a rebuild on request.
  fs::rename(state / "bloom.snap", Dir() / "bloom.snap.saved");
  auto refused = OpenCrawler(resume);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("--rebuild"), std::string::npos)
      << refused.status().message();
  CrawlConfig rebuild = resume;
  rebuild.crawl.rebuild_bloom = true;
  {
    auto crawler = OpenCrawler(rebuild);
    ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
    ASSERT_TRUE((*crawler)->Run().ok());
  }
  EXPECT_EQ(server_->log().size(), fetched);  // nothing was refetched
  EXPECT_EQ(ReadFile(out / "pages.jsonl"), pages);
  ASSERT_TRUE(fs::exists(state / "bloom.snap"));

  // state.db empty, then missing: an error with or without --resume; every file stays as it was.
  const std::string saved_snapshot = ReadFile(state / "bloom.snap");
  for (bool missing : {false, true}) {
    SCOPED_TRACE(missing);
    if (missing) {
      fs::remove(state / "state.db");
    } else {
      fs::resize_file(state / "state.db", 0);
    }
    for (const CrawlConfig& c : {config, resume}) {
      auto crawler = OpenCrawler(c);
      ASSERT_FALSE(crawler.ok());
      EXPECT_EQ(crawler.status().code(), StatusCode::kCorruption);
      EXPECT_NE(crawler.status().message().find((state / "state.db").string()), std::string::npos)
          << crawler.status().message();
    }
    EXPECT_EQ(ReadFile(out / "pages.jsonl"), pages);
    EXPECT_EQ(ReadFile(state / "bloom.snap"), saved_snapshot);
    EXPECT_EQ(fs::exists(state / "state.db"), !missing);
  }
  EXPECT_EQ(server_->log().size(), fetched);
}

TEST_F(CrawlerTest, WarcOutputHasARequestAndResponseRecordPerFetch) {
  CrawlConfig config = Config();
  config.output.warc = true;
  auto crawler = OpenCrawler(config);
  ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
  auto summary = (*crawler)->Run();
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  // The independent checker (Python standard library) reads every gzip member and verifies syntax,
  // lengths, digests and request/response pairing; it lists one "<offset> <type> <uri>" per record.
  const fs::path listing = Dir() / "warc.txt";
  const std::string command = "python3 " + std::string(URLSIEVE_SOURCE_DIR) +
                              "/tests/crawler/warc_check.py " + (Out() / "crawl.warc.gz").string() +
                              " > " + listing.string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream in(listing);
  std::map<std::string, size_t> records;
  std::string offset, type, uri;
  while (in >> offset >> type >> uri) ++records[type];
  EXPECT_EQ(records["warcinfo"], 1u);
  // An exact duplicate of a page archived before is a revisit (docs/features/content-seen.md).
  EXPECT_EQ(records["request"], records["response"] + records["revisit"]);
  // Every page fetch that got a response is archived (robots.txt fetches are archived too).
  size_t responded = 0;
  size_t duplicates = 0;
  for (const nlohmann::json& page : ReadJsonl("pages.jsonl")) {
    responded += page["status"] != 0;
    duplicates += page.contains("duplicate_of");
  }
  EXPECT_EQ(records["revisit"], duplicates);
  EXPECT_GE(records["response"] + records["revisit"], responded);
  EXPECT_GT(responded, 20u);
}

TEST_F(CrawlerTest, KillNineThenResumeLosesNothingAndRepeatsOnlyWhatWasInFlight) {
  constexpr int kThreads = 2;
  std::unique_ptr<testing::CrawlChild> crawl = SpawnCrawl(false, kThreads);
  // Kill it mid-crawl: once the server has answered a third of the pages it will answer.
  ASSERT_TRUE(server_->log().WaitUntil(
      [](const std::vector<LoggedRequest>& log) { return log.size() >= 25; },
      std::chrono::seconds(60)));
  ASSERT_NO_FATAL_FAILURE(crawl->Signal(SIGKILL));
  EXPECT_EQ(crawl->Wait(), 128 + SIGKILL);

  const size_t restart_at = server_->log().size();
  crawl = SpawnCrawl(true, kThreads);
  EXPECT_EQ(crawl->Wait(), 0);
  ExpectCorrectCrawl(kThreads, restart_at);
}

TEST_F(CrawlerTest, SigintStopsGracefullyAndResumeFinishesTheCrawl) {
  constexpr int kThreads = 2;
  std::unique_ptr<testing::CrawlChild> crawl = SpawnCrawl(false, kThreads);
  ASSERT_TRUE(server_->log().WaitUntil(
      [](const std::vector<LoggedRequest>& log) { return log.size() >= 25; },
      std::chrono::seconds(60)));
  ASSERT_NO_FATAL_FAILURE(crawl->Signal(SIGINT));
  EXPECT_EQ(crawl->Wait(), 0);

  const size_t restart_at = server_->log().size();
  crawl = SpawnCrawl(true, kThreads);
  EXPECT_EQ(crawl->Wait(), 0);
  ExpectCorrectCrawl(kThreads, restart_at);
}

// strip_tracking_params over a real `urlsieve crawl` (docs/features/canonicalization.md, "Tracking
// parameters"): URLs that differ only in tracking parameters are one URL, fetched once as first
// found; an exception keeps a parameter on its host; and the state keeps the rule and its
// exceptions, so that a --resume whose config has neither keys what it is given as before.
class CrawlTrackingParamsTest : public testing::CrawlTest {
 protected:
  CrawlTrackingParamsTest() : CrawlTest("urlsieve_tracking") {}

  void SetUp() override {
    Serve([](const std::vector<std::string>&) {
      auto map = std::make_unique<site::MapSite>();
      map->Set("/", "text/html",
               "<html><body><a href=\"/a?utm_source=mail\">a</a> "
               "<a href=\"/a?fbclid=1&amp;utm_source=mail\">a again</a> "
               "<a href=\"/c?utm_id=1\">c1</a></body></html>");
      for (const char* page : {"/a?utm_source=mail", "/c?utm_id=1", "/c?utm_id=2",
                               "/d?x=1;utm_source=q", "/a?id=5&gclid=1"}) {
        map->Set(page, "text/html", "<html><body>leaf</body></html>");
      }
      return map;
    });
  }

  testing::ProgramRun Crawl(const fs::path& config, std::vector<std::string> more) {
    std::vector<std::string> args = {
        "crawl", "--config",     config.string(), "--seeds", Seeds().string(),
        "--out", Out().string(), "--threads",     "1",       "--delay-ms",
        "0",     "--log-level",  "quiet"};
    args.insert(args.end(), more.begin(), more.end());
    return testing::RunUrlsieve(args, Dir());
  }

  size_t Fetches(const std::string& resource) const { return server_->log().Count(0, resource); }
};

TEST_F(CrawlTrackingParamsTest, TheStateKeepsTheRuleAndItsExceptionsAcrossAResume) {
  const Result<CanonicalUrl> seed = UrlCanonicalizer().Canonicalize(server_->Url("/"));
  ASSERT_TRUE(seed.ok()) << seed.status().ToString();
  const std::string host(seed->host());  // "127.0.0.1"
  const fs::path ruled = Dir() / "ruled.toml";
  std::ofstream(ruled) << "[canonicalize]\nstrip_tracking_params = true\n"
                       << "tracking_exceptions = [\"" << host << ":utm_id\"]\n";
  const fs::path plain = Dir() / "plain.toml";
  std::ofstream(plain) << "[canonicalize]\nstrip_tracking_params = false\n";

  testing::ProgramRun first = Crawl(ruled, {});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(Fetches("/"), 1u);
  EXPECT_EQ(Fetches("/a?utm_source=mail"), 1u);           // fetched as first found
  EXPECT_EQ(Fetches("/a?fbclid=1&utm_source=mail"), 0u);  // the same key, /a
  EXPECT_EQ(Fetches("/c?utm_id=1"), 1u);
  const std::string saved = ReadFile(Out() / "crawl.toml");
  EXPECT_NE(saved.find("strip_tracking_params = true"), std::string::npos) << saved;

  // Continued with a config without the rule, and new seeds: they are keyed by the state's rule
  // and exceptions.
  testing::WriteSeeds(Seeds(), {server_->Url("/"), server_->Url("/a?utm_campaign=z&fbclid=1"),
                                server_->Url("/c?utm_id=2"), server_->Url("/d?x=1;utm_source=q"),
                                server_->Url("/a?id=5&gclid=1")});
  testing::ProgramRun second = Crawl(plain, {"--resume"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(Fetches("/"), 1u);
  EXPECT_EQ(Fetches("/a?utm_campaign=z&fbclid=1"), 0u);  // /a: seen
  EXPECT_EQ(Fetches("/c?utm_id=2"), 1u);                 // utm_id is kept on this host: a new URL
  EXPECT_EQ(Fetches("/d?x=1;utm_source=q"), 1u);         // a parameter holding ';' is kept whole
  EXPECT_EQ(Fetches("/a?id=5&gclid=1"), 1u);             // /a?id=5, new, fetched as given

  const testing::ProgramRun stats =
      testing::RunUrlsieve({"stats", "--state", (Out() / "state").string(), "--json"}, Dir());
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("strip-tracking-params,keep-tracking-param=" + host + ":utm_id"),
            std::string::npos)
      << stats.out;
}

}  // namespace
}  // namespace urlsieve
