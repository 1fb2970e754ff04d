// Crawls that meet the failures a user must see and control (issue 10): a Retry-After longer than
// max_retry_after, TLS certificates that do not verify (--ca-file, --insecure), an unreachable
// host (--log-level, --robots-retries), and the error strings of pages.jsonl. Real servers on
// 127.0.0.1 (tools/site_server, HTTPS with a self-signed certificate made in memory); the
// command-line tests run the real `urlsieve` binary.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "crawler/crawl/crawler.h"
#include "tests/crawler/crawl_watchdog.h"
#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/generated_site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::GeneratedSite;
using site::LoggedRequest;
using site::SiteServer;
using testing::Lines;
using testing::ProgramRun;
using testing::ReadFile;

// A loopback port nobody listens on: bound, then closed, so connecting is refused.
int ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t size = sizeof(addr);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class CrawlFailuresTest : public ::testing::Test {
 protected:
  void StartSite(bool tls) {
    site::GeneratedSiteOptions gen;
    gen.page_count = 3;
    gen.large_page_bytes = 256 * 1024;
    gen.gzip_bomb_bytes = 1024;
    gen.crawl_delay = "";
    site::SiteServerOptions options;
    options.tls = tls;
    server_ = testing::StartSite(
        [&](const std::vector<std::string>& origins) {
          return std::make_unique<GeneratedSite>(gen, origins);
        },
        options);
    ASSERT_NE(server_, nullptr);
  }

  void WriteSeeds(const std::vector<std::string>& seeds) const {
    testing::WriteSeeds(dir_.path() / "seeds.txt", seeds);
  }

  CrawlConfig Config() const {
    CrawlConfig c = testing::SmallCrawlConfig(dir_.path() / "seeds.txt", out(), 2);
    c.crawl.max_depth = 0;  // the seeds only
    c.politeness.delay_ms = 10;
    c.politeness.backoff_ms = 50;
    c.fetch.timeout_ms = 5000;
    c.fetch.connect_timeout_ms = 2000;
    return c;
  }

  // Runs a crawl in this process (crawl_watchdog.h) and checks that it ended by itself.
  CrawlSummary Crawl(const CrawlConfig& config) {
    Result<CrawlSummary> summary = testing::RunCrawlWithWatchdog(config);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    if (!summary.ok()) return {};
    EXPECT_FALSE(summary->stopped) << "the crawl did not end by itself";
    EXPECT_EQ(summary->pending, 0u);
    return *summary;
  }

  // Runs `urlsieve crawl --seeds <seeds> --out <out> --threads 2 <args>` (words separated by
  // spaces), capturing stdout and stderr.
  ProgramRun UrlsieveCrawl(const std::string& args) const {
    std::vector<std::string> argv = {"crawl", "--seeds",      (dir_.path() / "seeds.txt").string(),
                                     "--out", out().string(), "--threads",
                                     "2"};
    std::istringstream words(args);
    for (std::string word; words >> word;) argv.push_back(word);
    return testing::RunUrlsieve(argv, dir_.path());
  }

  fs::path out() const { return dir_.path() / "out"; }
  std::vector<nlohmann::json> ReadJsonl(const std::string& name) const {
    return testing::ReadJsonl(out() / name);
  }
  nlohmann::json StatsJson() const { return nlohmann::json::parse(ReadFile(out() / "stats.json")); }
  std::string CertificateFile() const {
    const fs::path path = dir_.path() / "ca.pem";
    std::ofstream(path) << server_->tls_certificate_pem();
    return path.string();
  }

  urlsieve::testing::ScratchDir dir_{"urlsieve_failures"};
  std::unique_ptr<SiteServer> server_;
};

TEST_F(CrawlFailuresTest, RetryAfterAboveTheCapRetiresTheHostAndTheCrawlEnds) {
  StartSite(/*tls=*/false);
  const std::string busy = "/status/503?retry_after=999999";  // eleven days
  WriteSeeds({server_->Url(busy), server_->Url("/pages/1"), server_->Url("/about")});
  CrawlConfig config = Config();
  config.crawl.threads = 1;                             // the seeds in order: the 503 first
  ASSERT_EQ(config.politeness.max_retry_after_s, 600);  // the default, 10 minutes
  const CrawlSummary summary = Crawl(config);

  // The host was retired at its first 503: nothing else was fetched, nothing was waited for.
  size_t busy_requests = 0;
  for (const LoggedRequest& r : server_->log().Snapshot()) {
    EXPECT_TRUE(r.resource == "/robots.txt" || r.resource == busy) << r.resource;
    busy_requests += r.resource == busy;
  }
  EXPECT_EQ(busy_requests, 1u);
  const std::vector<nlohmann::json> rejected = ReadJsonl("rejected.jsonl");
  ASSERT_EQ(rejected.size(), 3u);
  for (const nlohmann::json& r : rejected) EXPECT_EQ(r["reason"], "retry_after_too_long") << r;
  EXPECT_EQ(summary.stats.rejections.at("retry_after_too_long"), 3u);
  EXPECT_EQ(StatsJson()["rejections"]["retry_after_too_long"], 3);
  const std::vector<nlohmann::json> pages = ReadJsonl("pages.jsonl");
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_EQ(pages[0]["status"], 503);
}

TEST_F(CrawlFailuresTest, ARobotsTxtCertificateErrorRejectsTheOriginOnceWithoutRetrying) {
  StartSite(/*tls=*/true);
  WriteSeeds({server_->Url("/"), server_->Url("/about")});
  const CrawlSummary summary = Crawl(Config());  // verification on, the system's CA bundle

  // One attempt, counted; no robots_unreachable after 75 s of retries.
  EXPECT_EQ(summary.stats.errors, (std::map<std::string, uint64_t>{{"tls", 1}}));
  EXPECT_EQ(StatsJson()["errors"], nlohmann::json({{"tls", 1}}));
  EXPECT_EQ(server_->log().size(), 0u);  // no request got past the handshake
  const std::vector<nlohmann::json> rejected = ReadJsonl("rejected.jsonl");
  ASSERT_EQ(rejected.size(), 2u);
  for (const nlohmann::json& r : rejected) EXPECT_EQ(r["reason"], "tls_error") << r;
  EXPECT_EQ(summary.stats.rejections.count("robots_unreachable"), 0u);
  EXPECT_TRUE(ReadJsonl("pages.jsonl").empty());
  EXPECT_EQ(StatsJson()["tls_verification"], true);
}

TEST_F(CrawlFailuresTest, APageCertificateErrorIsRecordedOnceAndNotRetried) {
  StartSite(/*tls=*/true);
  WriteSeeds({server_->Url("/"), server_->Url("/about")});
  CrawlConfig config = Config();
  config.politeness.obey_robots = false;
  config.politeness.max_retries = 5;
  const CrawlSummary summary = Crawl(config);

  const std::vector<nlohmann::json> pages = ReadJsonl("pages.jsonl");
  ASSERT_EQ(pages.size(), 1u);  // one attempt, and none for the other URL of the origin
  EXPECT_EQ(pages[0]["status"], 0);
  const std::string error = pages[0]["error"];
  EXPECT_EQ(error.rfind("tls: ", 0), 0u) << error;
  EXPECT_EQ(error.find("tls: tls"), std::string::npos) << error;
  EXPECT_EQ(summary.stats.errors, (std::map<std::string, uint64_t>{{"tls", 1}}));
  const std::vector<nlohmann::json> rejected = ReadJsonl("rejected.jsonl");
  ASSERT_EQ(rejected.size(), 2u);
  for (const nlohmann::json& r : rejected) EXPECT_EQ(r["reason"], "tls_error") << r;
}

TEST_F(CrawlFailuresTest, CaFileTrustsTheServersCertificate) {
  StartSite(/*tls=*/true);
  WriteSeeds({server_->Url("/"), server_->Url("/about")});
  CrawlConfig config = Config();
  config.fetch.ca_file = CertificateFile();
  const CrawlSummary summary = Crawl(config);

  EXPECT_TRUE(summary.stats.errors.empty());
  const std::vector<nlohmann::json> pages = ReadJsonl("pages.jsonl");
  ASSERT_EQ(pages.size(), 2u);
  for (const nlohmann::json& page : pages) EXPECT_EQ(page["status"], 200) << page;
  EXPECT_EQ(StatsJson()["tls_verification"], true);
}

TEST_F(CrawlFailuresTest, InsecureFetchesWarnsAndSaysSoInStatsJson) {
  StartSite(/*tls=*/true);
  WriteSeeds({server_->Url("/")});
  const ProgramRun run = UrlsieveCrawl("--insecure --max-depth 0 --delay-ms 10");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("urlsieve: warning: --insecure: TLS certificates and host names are not "
                         "verified"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(StatsJson()["tls_verification"], false);
  const std::vector<nlohmann::json> pages = ReadJsonl("pages.jsonl");
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_EQ(pages[0]["status"], 200);
}

TEST_F(CrawlFailuresTest, AnUnreachableHostLogsEachRetryThenGivesUp) {
  const int port = ClosedPort();
  const std::string origin = "http://127.0.0.1:" + std::to_string(port);
  WriteSeeds({origin + "/"});
  const std::string args = "--robots-retries 1 --backoff-ms 10 --delay-ms 0 ";

  // Not a terminal (stderr is a file), and still every decision is on stderr.
  ProgramRun run = UrlsieveCrawl(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 2u) << run.err;
  const std::string prefix = "urlsieve: " + origin + "/robots.txt: connect: ";
  EXPECT_EQ(lines[0].rfind(prefix, 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("; attempt 1 of 2 failed, retrying in 10 ms"), std::string::npos)
      << lines[0];
  EXPECT_EQ(lines[1].rfind(prefix, 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find("; attempt 2 of 2 failed, robots.txt unreachable: the origin's URLs are "
                          "rejected (robots_unreachable)"),
            std::string::npos)
      << lines[1];
  std::vector<nlohmann::json> rejected = ReadJsonl("rejected.jsonl");
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0]["reason"], "robots_unreachable");
  EXPECT_EQ(StatsJson()["errors"]["connect"], 2);  // robots.txt attempts are counted too

  // quiet: nothing at all on stderr, the same outcome.
  fs::remove_all(out());
  run = UrlsieveCrawl(args + "--log-level quiet");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  rejected = ReadJsonl("rejected.jsonl");
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0]["reason"], "robots_unreachable");

  // debug: every fetch as well.
  fs::remove_all(out());
  run = UrlsieveCrawl(args + "--log-level debug");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("urlsieve: debug: robots " + origin + "/robots.txt: connect: "),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("attempt 2 of 2 failed"), std::string::npos) << run.err;
}

TEST_F(CrawlFailuresTest, PageErrorsCarryTheirKindOnce) {
  StartSite(/*tls=*/false);
  WriteSeeds({server_->Url("/large"), server_->Url("/slow?ms=30000")});
  CrawlConfig config = Config();
  config.politeness.obey_robots = false;
  config.politeness.max_retries = 0;
  config.fetch.max_body_bytes = 64 * 1024;
  config.fetch.timeout_ms = 300;
  const CrawlSummary summary = Crawl(config);

  std::map<std::string, std::string> errors;
  for (const nlohmann::json& page : ReadJsonl("pages.jsonl")) {
    errors[page["url"]] = page["error"].is_string() ? page["error"].get<std::string>() : "";
  }
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[server_->Url("/large")], "body too large: more than 65536 bytes after decoding");
  const std::string timeout = errors[server_->Url("/slow?ms=30000")];
  EXPECT_EQ(timeout.rfind("timeout: ", 0), 0u) << timeout;
  EXPECT_EQ(timeout.find("timeout: timeout"), std::string::npos) << timeout;
  EXPECT_EQ(summary.stats.errors,
            (std::map<std::string, uint64_t>{{"body too large", 1}, {"timeout", 1}}));
}

}  // namespace
}  // namespace urlsieve
