// One crawl loop, three deployments (docs/architecture.md, "One crawl, three deployments"): the
// same `urlsieve crawl` of the generated trap site (tools/site_server, 4 hosts on their own
// ports) run standalone, over a seen set shared in Redis (--seen-redis) and as the one node of a
// cluster (--cluster), each against a real redis-server on a random loopback port where it needs
// one. Each must fetch every page a correct crawl fetches exactly once and none it must not
// (read from the site's own request log), and record each fetch once in pages.jsonl and
// stats.json: the loop, the PageProcessor and the recorder are the same code on all three.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/crawler/deployment_flags.h"
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

using testing::Deployment;

class CrawlDeploymentsTest : public ::testing::TestWithParam<Deployment> {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<ScratchDir>("crawl_deployments");
    if (GetParam() != Deployment::kLocal) {
      redis_ = RedisServer::Start(dir_->path() / "redis");
      ASSERT_NE(redis_, nullptr);
    }
    server_ = testing::StartGeneratedSite(testing::TrapSiteOptions(std::chrono::milliseconds(200)),
                                          kHosts, &site_);
    ASSERT_NE(server_, nullptr);
    testing::WriteChildCrawlToml(dir_->path() / "crawl.toml", /*progress=*/false);
    std::ofstream(dir_->path() / "seeds.txt") << server_->Url("/") << "\n";
  }

  std::vector<std::string> CrawlArgs() const {
    std::vector<std::string> args = {"crawl", "--seeds",      (dir_->path() / "seeds.txt").string(),
                                     "--out", Out().string(), "--threads",
                                     "2"};
    for (std::string& flag : testing::ChildCrawlFlags(20, dir_->path() / "crawl.toml")) {
      args.push_back(std::move(flag));
    }
    testing::AppendDeploymentFlags(GetParam(), redis_ ? redis_->url() : "", &args);
    return args;
  }
  fs::path Out() const { return dir_->path() / "out"; }
  fs::path File(const std::string& name) const { return dir_->path() / name; }

  std::unique_ptr<ScratchDir> dir_;
  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<SiteServer> server_;
  GeneratedSite* site_ = nullptr;
};

TEST_P(CrawlDeploymentsTest, FetchesEveryPageOnceAndRecordsEachFetchOnce) {
  UrlsieveChild crawl(CrawlArgs(), File("crawl.err"), File("crawl.out"));
  ASSERT_EQ(crawl.Wait(), 0) << ReadFile(File("crawl.err"));

  std::map<std::pair<int, std::string>, int> count;
  for (const LoggedRequest& request : server_->log().Snapshot()) {
    if (!testing::IsRobots(request.resource)) ++count[{request.host, request.resource}];
  }
  for (int h = 0; h < kHosts; ++h) {
    const site::HostExpectations& expect = site_->expectations(h);
    for (const std::string& resource : expect.must_fetch) {
      if (testing::IsRobots(resource)) continue;
      EXPECT_GE(count[std::make_pair(h, resource)], 1)
          << "host " << h << " never fetched " << resource;
    }
    for (const std::string& resource : expect.must_not_fetch) {
      EXPECT_EQ(count.count({h, resource}), 0u) << "host " << h << " fetched " << resource;
    }
  }
  uint64_t page_fetches = 0;
  for (const auto& [key, n] : count) {
    page_fetches += n;
    if (site_->expectations(key.first).may_repeat.count(key.second)) continue;
    EXPECT_LE(n, 1) << "host " << key.first << " " << key.second << " fetched " << n << " times";
  }

  // pages.jsonl and stats.json: one record per fetch.
  std::istringstream lines(ReadFile(Out() / "pages.jsonl"));
  uint64_t records = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(nlohmann::json::parse(line).contains("url")) << line;
    ++records;
  }
  EXPECT_GT(records, 0u);
  const nlohmann::json stats = nlohmann::json::parse(ReadFile(Out() / "stats.json"));
  EXPECT_EQ(stats["pages"].get<uint64_t>(), records);
  EXPECT_EQ(stats["pages"].get<uint64_t>(), page_fetches);
  EXPECT_EQ(stats.contains("node_id"), GetParam() == Deployment::kCluster);
}

INSTANTIATE_TEST_SUITE_P(Deployments, CrawlDeploymentsTest,
                         ::testing::Values(Deployment::kLocal, Deployment::kShared,
                                           Deployment::kCluster),
                         testing::DeploymentName);

}  // namespace
}  // namespace urlsieve
