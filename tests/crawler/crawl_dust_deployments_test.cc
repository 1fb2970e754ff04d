// Learned URL rules on every deployment (docs/features/dust.md; docs/architecture.md, "One crawl,
// three deployments"): the same `urlsieve crawl` of SessionSite (a session parameter that selects
// nothing) standalone, over a seen set shared in Redis (--seen-redis) and as the one node of a
// cluster (--cluster), each against a real redis-server on a random loopback port where it needs
// one. Each learns "drop-param sid", keeps it in its state (`urlsieve rules`), stops fetching the
// session copies (rejected.jsonl "dust", stats.json) and, where it shares a set, publishes the
// rule for the other crawls of the set.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "redis/redis_client.h"
#include "tests/crawler/deployment_flags.h"
#include "tests/crawler/session_site.h"
#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::ReadJsonl;

constexpr int kArticles = 60;

using testing::Deployment;

class CrawlDustDeploymentsTest : public ::testing::TestWithParam<Deployment> {
 protected:
  void SetUp() override {
    if (GetParam() != Deployment::kLocal) {
      redis_ = testing::RedisServer::Start(dir_.path() / "redis", {});
      ASSERT_NE(redis_, nullptr);
    }
    server_ = testing::StartSite([&](const std::vector<std::string>&) {
      return std::make_unique<testing::SessionSite>(kArticles, kArticles);
    });
    ASSERT_NE(server_, nullptr);
    testing::WriteChildCrawlToml(dir_.path() / "crawl.toml", /*progress=*/false);
  }

  std::vector<std::string> CrawlArgs() const {
    const fs::path seeds = dir_.path() / "seeds.txt";
    testing::WriteSeeds(seeds, {server_->Url("/a0")});
    std::vector<std::string> args = {"--seeds",     seeds.string(),
                                     "--out",       Out().string(),
                                     "--threads",   "1",
                                     "--delay-ms",  "0",
                                     "--max-depth", "1000",
                                     "--config",    (dir_.path() / "crawl.toml").string()};
    testing::AppendDeploymentFlags(GetParam(), redis_ ? redis_->url() : "", &args);
    return args;
  }
  fs::path Out() const { return dir_.path() / "out"; }

  testing::ScratchDir dir_{"crawl_dust_deployments"};
  std::unique_ptr<testing::RedisServer> redis_;
  std::unique_ptr<site::SiteServer> server_;
};

TEST_P(CrawlDustDeploymentsTest, LearnsKeepsAppliesAndSharesTheRule) {
  testing::CrawlChild crawl(dir_.path() / "crawl.err", CrawlArgs());
  ASSERT_EQ(crawl.Wait(), 0) << ReadFile(dir_.path() / "crawl.err");

  // In the state.
  testing::ProgramRun listed =
      testing::RunUrlsieve({"rules", "--state", Out().string(), "--json"}, dir_.path());
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::string rule_id;
  std::istringstream lines(listed.out);
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json rule = nlohmann::json::parse(line);
    if (rule["form"] == "drop-param sid" && rule["state"] == "active") rule_id = rule["id"];
  }
  ASSERT_FALSE(rule_id.empty()) << listed.out;

  // Applied: session copies rejected under it (the login forms under a skip rule of their own),
  // counted in stats.json; every article fetched.
  int rejected = 0;
  for (const nlohmann::json& r : ReadJsonl(Out() / "rejected.jsonl")) {
    if (r.value("reason", "") != "dust" ||
        r["url"].get<std::string>().find("?sid=") == std::string::npos) {
      continue;
    }
    EXPECT_EQ(r["rule"], rule_id) << r.dump();
    ++rejected;
  }
  EXPECT_GT(rejected, 0);
  const nlohmann::json stats = nlohmann::json::parse(ReadFile(Out() / "stats.json"));
  EXPECT_GE(stats["dust"]["suppressed"].get<int>(), rejected);
  int articles = 0;
  for (const nlohmann::json& page : ReadJsonl(Out() / "pages.jsonl")) {
    const std::string url = page["url"].get<std::string>();
    articles += url.find("?") == std::string::npos && url.find("/login") == std::string::npos;
  }
  EXPECT_EQ(articles, kArticles);

  // Shared: in the set's rule hash, for the other crawls of the set.
  if (GetParam() == Deployment::kLocal) return;
  auto client = RedisClient::Connect(redis_->address());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto state = (*client)->Run(
      {{"HGET", "urlsieve:{matrix:dust}:rules", server_->origin() + " drop-param sid"}});
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->str, "active");
}

INSTANTIATE_TEST_SUITE_P(Deployments, CrawlDustDeploymentsTest,
                         ::testing::Values(Deployment::kLocal, Deployment::kShared,
                                           Deployment::kCluster),
                         testing::DeploymentName);

}  // namespace
}  // namespace urlsieve
