// Learned URL rules shared through Redis (docs/features/dust.md, "Shared crawls"): two `urlsieve
// crawl --seen-redis` crawls on one set, against a real redis-server on a random loopback port.
// The first learns "drop-param sid" and publishes it; the second adopts it before its first page
// and never fetches a session copy; a rule one crawl retires is retired in the other.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "redis/redis_client.h"
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
using testing::CrawlChild;
using testing::ReadJsonl;

constexpr int kArticles = 40;

class CrawlDustRedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = testing::RedisServer::Start(dir_.path() / "redis", {});
    ASSERT_NE(redis_, nullptr);
    server_ = testing::StartSite([&](const std::vector<std::string>&) {
      return std::make_unique<testing::SessionSite>(kArticles, kArticles);
    });
    ASSERT_NE(server_, nullptr);
    testing::WriteChildCrawlToml(dir_.path() / "crawl.toml", /*progress=*/false);
    // Rules on five pairs: the site is small (the lower bound is url/dust_learner_test.cc's).
    std::ofstream(dir_.path() / "crawl.toml", std::ios::app)
        << "[dust]\nmin_confidence_bound = 0\n";
  }

  // A crawl from `seed` into out-`tag`, on the shared set "shared".
  int Crawl(const std::string& tag, const std::string& seed, std::vector<std::string> extra) {
    const fs::path seeds = dir_.path() / (tag + "-seeds.txt");
    testing::WriteSeeds(seeds, {server_->Url(seed)});
    std::vector<std::string> args = {"--seeds",      seeds.string(),
                                     "--out",        (dir_.path() / ("out-" + tag)).string(),
                                     "--threads",    "1",
                                     "--delay-ms",   "0",
                                     "--config",     (dir_.path() / "crawl.toml").string(),
                                     "--seen-redis", redis_->url(),
                                     "--name",       "shared"};
    args.insert(args.end(), extra.begin(), extra.end());
    CrawlChild crawl(dir_.path() / (tag + ".err"), args);
    const int code = crawl.Wait();
    EXPECT_EQ(code, 0) << testing::ReadFile(dir_.path() / (tag + ".err"));
    return code;
  }

  std::vector<std::string> Fetched(const std::string& tag) const {
    std::vector<std::string> urls;
    for (const nlohmann::json& page : ReadJsonl(dir_.path() / ("out-" + tag) / "pages.jsonl")) {
      urls.push_back(page["url"].get<std::string>());
    }
    return urls;
  }

  std::map<std::string, std::string> RuleStates(const std::string& tag) const {
    testing::ProgramRun run = testing::RunUrlsieve(
        {"rules", "--state", (dir_.path() / ("out-" + tag)).string(), "--json", "--all"},
        dir_.path());
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::map<std::string, std::string> states;
    std::istringstream lines(run.out);
    for (std::string line; std::getline(lines, line);) {
      const nlohmann::json rule = nlohmann::json::parse(line);
      states[rule["form"].get<std::string>()] = rule["state"].get<std::string>();
    }
    return states;
  }

  std::map<std::string, std::string> SharedRules() {
    auto client = RedisClient::Connect(redis_->address());
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    std::map<std::string, std::string> rules;
    if (!client.ok()) return rules;
    auto reply = (*client)->Run({{"HGETALL", "urlsieve:{shared:dust}:rules"}});
    EXPECT_TRUE(reply.ok());
    if (!reply.ok()) return rules;
    for (size_t i = 0; i + 1 < reply->elements.size(); i += 2) {
      rules[reply->elements[i].str] = reply->elements[i + 1].str;
    }
    return rules;
  }

  testing::ScratchDir dir_{"crawl_dust_redis"};
  std::unique_ptr<testing::RedisServer> redis_;
  std::unique_ptr<site::SiteServer> server_;
};

TEST_F(CrawlDustRedisTest, ARuleOneCrawlLearnedAppliesInTheOtherFromItsFirstPage) {
  // The first crawl walks the first half of the chain and learns the session parameter.
  ASSERT_EQ(Crawl("a", "/a0", {"--max-depth", "20"}), 0);
  EXPECT_EQ(RuleStates("a")["drop-param sid"], "active");
  const std::map<std::string, std::string> shared = SharedRules();
  ASSERT_TRUE(shared.count(server_->origin() + " drop-param sid")) << shared.size();
  EXPECT_EQ(shared.at(server_->origin() + " drop-param sid"), "active");
  // `urlsieve rules --redis` lists what the set's crawls adopted.
  testing::ProgramRun listed =
      testing::RunUrlsieve({"rules", "--redis", redis_->url(), "--name", "shared"}, dir_.path());
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("active  " + server_->origin() + "  drop-param sid\n"),
            std::string::npos)
      << listed.out;

  // The second starts where the first stopped: it has the rule before its first page.
  ASSERT_EQ(Crawl("b", "/a21", {"--max-depth", "1000"}), 0);
  EXPECT_EQ(RuleStates("b")["drop-param sid"], "active");
  // A session URL it fetches is a check of the rule (its 4th and 16th URL, then every 50th).
  int articles = 0;
  int checks = 0;
  for (const nlohmann::json& page : ReadJsonl(dir_.path() / "out-b" / "pages.jsonl")) {
    const std::string url = page["url"].get<std::string>();
    if (url.find("?sid=") != std::string::npos) {
      EXPECT_TRUE(page.contains("dust_check")) << url;
      ++checks;
    } else {
      articles += url.find("/login") == std::string::npos;
    }
  }
  EXPECT_LE(checks, 2);
  EXPECT_EQ(articles, kArticles - 21);
}

TEST_F(CrawlDustRedisTest, ARuleOneCrawlRetiredIsRetiredInTheOther) {
  ASSERT_EQ(Crawl("a", "/a0", {"--max-depth", "20"}), 0);
  ASSERT_EQ(SharedRules()[server_->origin() + " drop-param sid"], "active");
  // Another crawl found it wrong (its check failed).
  auto client = RedisClient::Connect(redis_->address());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)
                  ->Run({{"HSET", "urlsieve:{shared:dust}:rules",
                          server_->origin() + " drop-param sid", "retired"}})
                  .ok());
  ASSERT_EQ(Crawl("b", "/a21", {"--max-depth", "1000"}), 0);
  EXPECT_EQ(RuleStates("b")["drop-param sid"], "rejected");
  int sessions = 0;
  for (const std::string& url : Fetched("b")) sessions += url.find("?sid=") != std::string::npos;
  EXPECT_GT(sessions, 0) << "a retired rule suppresses nothing";
  EXPECT_EQ(SharedRules()[server_->origin() + " drop-param sid"], "retired");
}

}  // namespace
}  // namespace urlsieve
