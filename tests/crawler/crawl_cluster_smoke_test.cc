// `urlsieve crawl --cluster`: a small smoke test of two nodes (child processes) crawling the
// generated trap site (tools/site_server, 4 hosts on their own ports) through a real
// redis-server on a random loopback port. One node has the seeds, the other joins without any
// and waits for work. What was fetched is read from the site's own request log; the cluster's
// end is each node's exit 0. The full end-to-end tests (kill -9, joins, SIGINT and
// --resume, a Redis Cluster, bad input) are in crawl_cluster_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "redis/redis_client.h"
#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/generated_site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::GeneratedSite;
using site::LoggedRequest;
using site::SiteServer;
using testing::ReadFile;
using testing::RedisServer;
using testing::ScratchDir;
using testing::UrlsieveChild;

constexpr int kHosts = 4;

// The parameter: whether Redis loaded the urlsieve server module (the routed seen set's inserts
// then go through URLSIEVE.INSERT_ROUTED instead of the Function).
class CrawlClusterSmokeTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<ScratchDir>("crawl_cluster_smoke");
    RedisServer::Options options;
    options.urlsieve_module = GetParam();
    redis_ = RedisServer::Start(dir_->path() / "redis", options);
    ASSERT_NE(redis_, nullptr);
    server_ = testing::StartGeneratedSite(testing::TrapSiteOptions(std::chrono::milliseconds(200)),
                                          kHosts, &site_);
    ASSERT_NE(server_, nullptr);
    testing::WriteChildCrawlToml(dir_->path() / "crawl.toml", /*progress=*/false);
    std::ofstream(dir_->path() / "seeds.txt") << server_->Url("/") << "\n";
  }

  // `urlsieve crawl` as node `node` of the cluster "smoke".
  std::vector<std::string> CrawlArgs(const std::string& node, bool seeds) {
    std::vector<std::string> args = {"crawl",
                                     "--cluster",
                                     redis_->url(),
                                     "--cluster-name",
                                     "smoke",
                                     "--node-id",
                                     node,
                                     "--partitions",
                                     "64",
                                     "--out",
                                     (dir_->path() / node).string(),
                                     "--threads",
                                     "2"};
    for (std::string& flag : testing::ChildCrawlFlags(20, dir_->path() / "crawl.toml")) {
      args.push_back(std::move(flag));
    }
    if (seeds) args.insert(args.end(), {"--seeds", (dir_->path() / "seeds.txt").string()});
    return args;
  }
  fs::path File(const std::string& name) const { return dir_->path() / name; }

  std::unique_ptr<ScratchDir> dir_;
  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<SiteServer> server_;
  GeneratedSite* site_ = nullptr;
};

TEST_P(CrawlClusterSmokeTest, TwoNodesFetchEveryPageOnceAndEndTogether) {
  UrlsieveChild a(CrawlArgs("a", /*seeds=*/true), File("a.err"), File("a.out"));
  UrlsieveChild b(CrawlArgs("b", /*seeds=*/false), File("b.err"), File("b.out"));
  ASSERT_EQ(a.Wait(), 0) << ReadFile(File("a.err"));
  ASSERT_EQ(b.Wait(), 0) << ReadFile(File("b.err"));
  EXPECT_NE(ReadFile(File("a.out")).find("the cluster's crawl is over"), std::string::npos);

  // Every page a correct crawl must fetch was fetched once in all, none it must not.
  std::map<std::pair<int, std::string>, int> count;
  for (const LoggedRequest& request : server_->log().Snapshot()) {
    if (request.resource != "/robots.txt" && request.resource != "/moved-robots.txt") {
      ++count[{request.host, request.resource}];
    }
  }
  for (int h = 0; h < kHosts; ++h) {
    const site::HostExpectations& expect = site_->expectations(h);
    for (const std::string& resource : expect.must_fetch) {
      if (resource == "/robots.txt" || resource == "/moved-robots.txt") continue;
      EXPECT_GE(count[std::make_pair(h, resource)], 1)
          << "host " << h << " never fetched " << resource;
    }
    for (const std::string& resource : expect.must_not_fetch) {
      EXPECT_EQ(count.count({h, resource}), 0u) << "host " << h << " fetched " << resource;
    }
  }
  for (const auto& [key, n] : count) {
    if (site_->expectations(key.first).may_repeat.count(key.second)) continue;
    EXPECT_LE(n, 1) << "host " << key.first << " " << key.second << " fetched " << n << " times";
  }

  // Each node's outputs name it and its cluster; together they hold every fetch.
  uint64_t pages = 0;
  for (const std::string node : {"a", "b"}) {
    const nlohmann::json stats = nlohmann::json::parse(ReadFile(File(node) / "stats.json"));
    EXPECT_EQ(stats["node_id"], node);
    EXPECT_EQ(stats["cluster"]["name"], "smoke");
    EXPECT_EQ(stats["cluster"]["server"], redis_->url());
    pages += stats["pages"].get<uint64_t>();
  }
  uint64_t page_fetches = 0;
  for (const auto& [key, n] : count) page_fetches += n;
  EXPECT_EQ(pages, page_fetches);

  // `urlsieve cluster status` sees the same: both nodes finished, nothing pending.
  UrlsieveChild status(std::vector<std::string>{"cluster", "status", "--cluster", redis_->url(),
                                                "--cluster-name", "smoke", "--json"},
                       File("status.err"), File("status.out"));
  ASSERT_EQ(status.Wait(), 0) << ReadFile(File("status.err"));
  const nlohmann::json j = nlohmann::json::parse(ReadFile(File("status.out")));
  EXPECT_EQ(j["pending"], 0);
  EXPECT_EQ(j["pages"], pages);
  ASSERT_EQ(j["nodes"].size(), 2u);
  for (const nlohmann::json& node : j["nodes"]) EXPECT_EQ(node["state"], "finished");

  UrlsieveChild missing(std::vector<std::string>{"cluster", "status", "--cluster", redis_->url(),
                                                 "--cluster-name", "nosuch"},
                        File("missing.err"), File("missing.out"));
  EXPECT_EQ(missing.Wait(), 1);
  EXPECT_NE(ReadFile(File("missing.err")).find("no crawl cluster named 'nosuch'"),
            std::string::npos)
      << ReadFile(File("missing.err"));

  auto client = RedisClient::Connect(redis_->address());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto stats = (*client)->Run({{"INFO", "commandstats"}, -1});
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->str.find("cmdstat_urlsieve.insert_routed:") != std::string::npos, GetParam());
}

INSTANTIATE_TEST_SUITE_P(FunctionAndModule, CrawlClusterSmokeTest, ::testing::Bool(),
                         [](const auto& param_info) {
                           return param_info.param ? "ServerModule" : "Function";
                         });

}  // namespace
}  // namespace urlsieve
