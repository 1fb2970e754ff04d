// Sitemaps on a crawl cluster (docs/features/cluster.md, "Sitemaps"): a sitemap goes to the inbox
// of its host's partition and is read once per crawl, whichever node finds it, and once more per
// re-crawl round. A MapSite (tools/site_server/map_site.h) on several hosts of 127.0.0.1 whose
// pages are reachable only through sitemaps: each host's robots.txt names its own text sitemap and
// one on host 0 that every host names. Two nodes (`urlsieve crawl --cluster` child processes)
// against a real redis-server on a random loopback port; what was read comes from the server's
// request log.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "redis/redis_client.h"
#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/map_site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::LoggedRequest;
using site::MapSite;
using site::SiteServer;
using testing::CrawlChild;
using testing::RedisServer;
using testing::ScratchDir;

constexpr int kHosts = 4;

class CrawlClusterSitemapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = RedisServer::Start(dir_.path() / "redis");
    ASSERT_NE(redis_, nullptr);
    site::SiteServerOptions options;
    options.hosts = kHosts;
    server_ = testing::StartSite(
        [](const std::vector<std::string>&) { return std::make_unique<MapSite>(); }, options);
    ASSERT_NE(server_, nullptr);
    MapSite& site = static_cast<MapSite&>(server_->site());
    // The same resources on every host; the sitemaps list absolute URLs of every host.
    site.Set("/robots.txt", "text/plain",
             "User-agent: *\nDisallow:\nSitemap: /own.txt\nSitemap: " +
                 server_->Url("/shared.txt") + "\n");
    std::string own, shared;
    for (int h = 0; h < kHosts; ++h) {
      own += server_->Url("/o/1.html", h) + "\n";
      shared += server_->Url("/o/2.html", h) + "\n";
    }
    site.Set("/own.txt", "text/plain", own);
    site.Set("/shared.txt", "text/plain", shared);
    for (const char* path : {"/", "/o/1.html", "/o/2.html"}) {
      site.Set(path, "text/html", "<html><body>no links</body></html>");
    }
    std::ofstream seeds(dir_.path() / "seeds.txt");
    for (int h = 0; h < kHosts; ++h) seeds << server_->Url("/", h) << "\n";
    std::ofstream(dir_.path() / "crawl.toml") << "[crawl]\nexpected_urls = 10000\n"
                                              << "[politeness]\nbackoff_ms = 50\n"
                                              << "[output]\nprogress = false\n";
  }

  fs::path Out(const std::string& node) const { return dir_.path() / ("out-" + node); }
  std::vector<std::string> NodeArgs(const std::string& node, bool seeds) const {
    std::vector<std::string> args = {"--out",          Out(node).string(),
                                     "--user-agent",   "urlsieve/" + node,
                                     "--threads",      "2",
                                     "--delay-ms",     "20",
                                     "--cluster",      redis_->url(),
                                     "--cluster-name", "sitemaps",
                                     "--node-id",      node,
                                     "--partitions",   "16",
                                     "--lease-ttl",    "2",
                                     "--config",       (dir_.path() / "crawl.toml").string()};
    if (seeds) args.insert(args.end(), {"--seeds", (dir_.path() / "seeds.txt").string()});
    return args;
  }

  // Requests per host and resource since the log's entry `from`, robots.txt aside.
  std::map<std::pair<int, std::string>, int> Requested(size_t from) const {
    std::map<std::pair<int, std::string>, int> counts;
    const std::vector<LoggedRequest> log = server_->log().Snapshot();
    for (size_t i = from; i < log.size(); ++i) {
      if (log[i].resource != "/robots.txt") ++counts[{log[i].host, log[i].resource}];
    }
    return counts;
  }
  // What one pass over the site asks: each host's own sitemap and pages once, the shared sitemap
  // once (on host 0).
  std::map<std::pair<int, std::string>, int> OnePass(bool with_index) const {
    std::map<std::pair<int, std::string>, int> expected;
    for (int h = 0; h < kHosts; ++h) {
      if (with_index) expected[{h, "/"}] = 1;
      expected[{h, "/own.txt"}] = 1;
      expected[{h, "/o/1.html"}] = 1;
      expected[{h, "/o/2.html"}] = 1;
    }
    expected[{0, "/shared.txt"}] = 1;
    return expected;
  }

  ScratchDir dir_{"crawl_cluster_sitemap"};
  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<SiteServer> server_;
};

TEST_F(CrawlClusterSitemapTest, EachSitemapIsReadOnceByTheClusterAndOnceMorePerRecrawl) {
  {
    // b is also given the shared sitemap (--sitemap): a flag and robots.txt lines name it, two
    // nodes find it, it is read once.
    std::vector<std::string> b_args = NodeArgs("b", /*seeds=*/true);
    b_args.insert(b_args.end(), {"--sitemap", server_->Url("/shared.txt")});
    CrawlChild a(dir_.path() / "a-1.err", NodeArgs("a", /*seeds=*/true));
    CrawlChild b(dir_.path() / "b-1.err", b_args);
    ASSERT_EQ(a.Wait(), 0) << a.err();
    ASSERT_EQ(b.Wait(), 0) << b.err();
  }
  EXPECT_EQ(Requested(0), OnePass(/*with_index=*/true));

  // A re-crawl round reads the sitemaps again (and re-fetches every page: revisit after 0).
  const size_t before = server_->log().size();
  CrawlChild recrawl(dir_.path() / "a-2.err",
                     {"--out", Out("a").string(), "--recrawl", "--revisit-after", "0"});
  ASSERT_EQ(recrawl.Wait(), 0) << recrawl.err();
  EXPECT_EQ(Requested(before), OnePass(/*with_index=*/true))
      << recrawl.err() << testing::ReadFile(Out("a") / "stats.json");

  // `urlsieve cluster delete` leaves nothing of the cluster (nor of its seen set) in Redis but the
  // seen set's replay records of recent calls, which expire within 300 s by themselves.
  const testing::ProgramRun deleted = testing::RunUrlsieve(
      {"cluster", "delete", "--cluster", redis_->url(), "--cluster-name", "sitemaps"}, dir_.path(),
      "");
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  auto client = RedisClient::Connect(redis_->address());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto keys = (*client)->Run({{"KEYS", "*"}, -1});
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  std::string left;
  for (const RedisReply& key : keys->elements) {
    if (key.str.find("}:done:") == std::string::npos) left += " " + key.str;
  }
  EXPECT_TRUE(left.empty()) << "left:" << left;
  const testing::ProgramRun again = testing::RunUrlsieve(
      {"cluster", "status", "--cluster", redis_->url(), "--cluster-name", "sitemaps"}, dir_.path(),
      "");
  EXPECT_EQ(again.exit_code, 1) << again.err;
  EXPECT_NE(again.err.find("no crawl cluster named 'sitemaps'"), std::string::npos) << again.err;
}

}  // namespace
}  // namespace urlsieve
