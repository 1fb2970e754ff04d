// `urlsieve crawl --seen-redis`: crawls of the generated trap site (tools/site_server) whose seen
// set is shared in a real redis-server on a random loopback port. What was fetched is read from
// the server's own request log.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
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
using testing::CrawlChild;
using testing::IsRobots;
using testing::RedisServer;
using testing::ScratchDir;

constexpr int kHosts = 4;
constexpr int kThreads = 2;

class CrawlRedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<ScratchDir>("crawl_redis");
    RedisServer::Options redis_options;
    redis_options.append_only = true;
    redis_ = RedisServer::Start(dir_->path() / "redis", redis_options);
    ASSERT_NE(redis_, nullptr);

    server_ = testing::StartGeneratedSite(testing::TrapSiteOptions(std::chrono::milliseconds(1500)),
                                          kHosts, &site_);
    ASSERT_NE(server_, nullptr);
    testing::WriteChildCrawlToml(dir_->path() / "crawl.toml", /*progress=*/false);
  }

  // Writes a seeds file of `paths` on host 0.
  fs::path Seeds(const std::string& tag, const std::vector<std::string>& paths) {
    const fs::path file = dir_->path() / (tag + "-seeds.txt");
    std::vector<std::string> urls;
    for (const std::string& path : paths) urls.push_back(server_->Url(path));
    testing::WriteSeeds(file, urls);
    return file;
  }
  std::vector<std::string> Args(const std::string& tag, const fs::path& seeds,
                                const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "--seeds",   seeds.string(),           "--out",        (dir_->path() / tag).string(),
        "--threads", std::to_string(kThreads), "--user-agent", "urlsieve-" + tag};
    for (std::string& flag : testing::ChildCrawlFlags(20, dir_->path() / "crawl.toml")) {
      args.push_back(std::move(flag));
    }
    if (!name.empty()) {
      args.insert(args.end(), {"--seen-redis", redis_->url(), "--name", name});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  fs::path Err(const std::string& tag) const { return dir_->path() / (tag + ".err"); }

  // Fetches of each (host, resource) other than robots.txt in log[from, to).
  std::map<std::pair<int, std::string>, int> Fetches(size_t from = 0, size_t to = SIZE_MAX) {
    const std::vector<LoggedRequest> log = server_->log().Snapshot();
    std::map<std::pair<int, std::string>, int> count;
    for (size_t i = from; i < log.size() && i < to; ++i) {
      if (!IsRobots(log[i].resource)) ++count[{log[i].host, log[i].resource}];
    }
    return count;
  }
  // Every page a correct crawl must fetch was fetched, none it must not, and none more than
  // `at_most` times (resources a crawler may retry aside).
  void ExpectEveryPageFetched(const std::map<std::pair<int, std::string>, int>& count,
                              int at_most) {
    for (int h = 0; h < kHosts; ++h) {
      const site::HostExpectations& expect = site_->expectations(h);
      for (const std::string& resource : expect.must_fetch) {
        if (IsRobots(resource)) continue;
        auto it = count.find({h, resource});
        EXPECT_TRUE(it != count.end() && it->second >= 1)
            << "host " << h << " never fetched " << resource;
      }
      for (const std::string& resource : expect.must_not_fetch) {
        EXPECT_EQ(count.count({h, resource}), 0u) << "host " << h << " fetched " << resource;
      }
    }
    for (const auto& [key, n] : count) {
      if (site_->expectations(key.first).may_repeat.count(key.second)) continue;
      EXPECT_LE(n, at_most) << "host " << key.first << " " << key.second << " fetched " << n
                            << " times";
    }
  }
  // Redis keys whose name mentions `name`.
  long long RedisKeysOf(const std::string& name) {
    auto client = RedisClient::Connect(redis_->address());
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) return -1;
    auto reply = (*client)->Run({{"KEYS", "*" + name + "*"}});
    return reply.ok() ? static_cast<long long>(reply->elements.size()) : -1;
  }
  bool WaitForRequests(size_t n) {
    return server_->log().WaitUntil(
        [n](const std::vector<LoggedRequest>& log) { return log.size() >= n; },
        std::chrono::seconds(60));
  }
  // Polls a child's stderr (with a deadline) for `text`.
  static bool WaitForErr(const CrawlChild& child, const std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (child.err().find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a poll of its stderr
    }
    return true;
  }
  size_t PagesOf(const std::string& tag) {
    std::ifstream in(dir_->path() / tag / "pages.jsonl");
    size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  std::unique_ptr<ScratchDir> dir_;
  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<SiteServer> server_;
  GeneratedSite* site_ = nullptr;
};

TEST_F(CrawlRedisTest, TwoCrawlsWithDisjointSeedsShareTheSeenSetAndFetchEachPageOnce) {
  // A crawl claims its seeds when it opens, before its first request. A starts from the index;
  // once it has made its first request (robots.txt) it is held (SIGSTOP) while B opens with the
  // page chain, which the index links to; then both run.
  auto first_request_of = [&](const std::string& agent) {
    return server_->log().WaitUntil(
        [&](const std::vector<LoggedRequest>& log) {
          for (const LoggedRequest& r : log) {
            if (r.user_agent == agent) return true;
          }
          return false;
        },
        std::chrono::seconds(60));
  };
  CrawlChild a(Err("a"), Args("a", Seeds("a", {"/"}), "shared"));
  ASSERT_TRUE(first_request_of("urlsieve-a"));
  a.Signal(SIGSTOP);
  const size_t a_held_at = server_->log().size();
  CrawlChild b(Err("b"), Args("b", Seeds("b", {"/pages/1"}), "shared"));
  ASSERT_TRUE(first_request_of("urlsieve-b"));
  a.Signal(SIGCONT);
  EXPECT_EQ(a.Wait(), 0) << a.err();
  EXPECT_EQ(b.Wait(), 0) << b.err();
  ExpectEveryPageFetched(Fetches(), 1);

  // Each seed was fetched by the crawl that claimed it: A's index always; B's page unless A had
  // fetched the index (and claimed its links) before it was held.
  const std::vector<LoggedRequest> log = server_->log().Snapshot();
  bool a_had_the_index = false;
  for (size_t i = 0; i < a_held_at && i < log.size(); ++i) {
    a_had_the_index |= log[i].host == 0 && log[i].resource == "/";
  }
  for (const LoggedRequest& r : log) {
    if (r.host == 0 && r.resource == "/") {
      EXPECT_EQ(r.user_agent, "urlsieve-a");
    }
    if (r.host == 0 && r.resource == "/pages/1" && !a_had_the_index) {
      EXPECT_EQ(r.user_agent, "urlsieve-b");
    }
  }
  EXPECT_GT(PagesOf("a"), 0u);
  if (!a_had_the_index) {
    EXPECT_GT(PagesOf("b"), 0u);
  }
}

// Two crawls sharing the set on a Redis that loaded the urlsieve server module: its inserts go
// through URLSIEVE.INSERT, and every page is fetched once.
TEST_F(CrawlRedisTest, TwoCrawlsShareTheSetThroughTheServerModule) {
  RedisServer::Options with_module;
  with_module.append_only = true;
  with_module.urlsieve_module = true;
  redis_ = RedisServer::Start(dir_->path() / "redis-module", with_module);
  ASSERT_NE(redis_, nullptr);
  CrawlChild a(Err("a"), Args("a", Seeds("a", {"/"}), "shared"));
  CrawlChild b(Err("b"), Args("b", Seeds("b", {"/", "/pages/1"}), "shared"));
  EXPECT_EQ(a.Wait(), 0) << a.err();
  EXPECT_EQ(b.Wait(), 0) << b.err();
  ExpectEveryPageFetched(Fetches(), 1);
  auto client = RedisClient::Connect(redis_->address());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto stats = (*client)->Run({{"INFO", "commandstats"}, -1});
  ASSERT_TRUE(stats.ok());
  EXPECT_NE(stats->str.find("cmdstat_urlsieve.insert:"), std::string::npos) << stats->str;
}

TEST_F(CrawlRedisTest, KillNineAndResumeOverTheSameSetLosesNoPage) {
  // No checkpoint before the kill (a long interval): the frontier on disk is empty, the seeds are
  // seen in Redis, and only the claim log can give the crawl its URLs back.
  const fs::path seeds = Seeds("k", {"/"});
  {
    CrawlChild crawl(Err("k"), Args("k", seeds, "claims", {"--checkpoint-s", "1000"}));
    ASSERT_TRUE(WaitForRequests(25));
    crawl.Signal(SIGKILL);
    EXPECT_EQ(crawl.Wait(), 128 + SIGKILL);
  }
  const size_t restart_at = server_->log().size();
  CrawlChild resumed(Err("k"), Args("k", seeds, "claims", {"--resume"}));
  EXPECT_EQ(resumed.Wait(), 0) << resumed.err();
  EXPECT_NE(resumed.err().find("claim log"), std::string::npos) << resumed.err();
  // Everything: what was fetched before the kill is fetched again (it was after the last
  // checkpoint), at most once more.
  ExpectEveryPageFetched(Fetches(), 2);
  const auto after = Fetches(restart_at);
  for (const auto& [key, n] : after) {
    if (site_->expectations(key.first).may_repeat.count(key.second)) continue;
    EXPECT_EQ(n, 1) << key.second;
  }

  // The same pages as an uninterrupted crawl on a set of its own.
  const size_t whole_from = server_->log().size();
  CrawlChild whole(Err("w"), Args("w", Seeds("w", {"/"}), "uninterrupted"));
  EXPECT_EQ(whole.Wait(), 0) << whole.err();
  std::set<std::pair<int, std::string>> uninterrupted, interrupted;
  for (const auto& [key, n] : Fetches(whole_from)) {
    if (key.second.rfind("/calendar/", 0) != 0) uninterrupted.insert(key);
  }
  for (const auto& [key, n] : Fetches(0, whole_from)) {
    if (key.second.rfind("/calendar/", 0) != 0) interrupted.insert(key);
  }
  EXPECT_EQ(interrupted, uninterrupted);
}

TEST_F(CrawlRedisTest, ResumeWithAnotherSetOrNoneIsAClearError) {
  const fs::path seeds = Seeds("r", {"/"});
  {
    CrawlChild crawl(Err("r"), Args("r", seeds, "first", {"--max-pages", "3"}));
    ASSERT_EQ(crawl.Wait(), 0) << crawl.err();
  }
  CrawlChild other(Err("other"), Args("r", seeds, "second", {"--resume"}));
  EXPECT_EQ(other.Wait(), 1);
  EXPECT_NE(other.err().find("'first'"), std::string::npos) << other.err();
  EXPECT_NE(other.err().find("--name first"), std::string::npos) << other.err();
  EXPECT_EQ(RedisKeysOf("second"), 0);  // nothing made for the wrong name

  CrawlChild local(Err("local"), Args("r", seeds, "", {"--resume"}));
  EXPECT_EQ(local.Wait(), 1);
  EXPECT_NE(local.err().find("shared in Redis"), std::string::npos) << local.err();

  // And a crawl begun with its own set cannot go on with a shared one.
  const fs::path local_seeds = Seeds("l", {"/"});
  {
    CrawlChild crawl(Err("l"), Args("l", local_seeds, "", {"--max-pages", "3"}));
    ASSERT_EQ(crawl.Wait(), 0) << crawl.err();
  }
  CrawlChild shared(Err("l2"), Args("l", local_seeds, "third", {"--resume"}));
  EXPECT_EQ(shared.Wait(), 1);
  EXPECT_NE(shared.err().find("its own seen set"), std::string::npos) << shared.err();
  EXPECT_EQ(RedisKeysOf("third"), 0);
}

TEST_F(CrawlRedisTest, WrongPasswordOrNotRedisIsAClearErrorAndWritesNothing) {
  RedisServer::Options options;
  options.password = "right";
  auto guarded = RedisServer::Start(dir_->path() / "guarded", options);
  ASSERT_NE(guarded, nullptr);
  const fs::path seeds = Seeds("p", {"/"});
  std::vector<std::string> args = Args("p", seeds, "");
  args.insert(args.end(),
              {"--seen-redis", "redis://:wrong@127.0.0.1:" + std::to_string(guarded->port()),
               "--name", "pw"});
  CrawlChild wrong(Err("p"), args);
  EXPECT_EQ(wrong.Wait(), 1);
  EXPECT_NE(wrong.err().find("127.0.0.1:" + std::to_string(guarded->port())), std::string::npos)
      << wrong.err();
  EXPECT_FALSE(fs::exists(dir_->path() / "p")) << "the crawl wrote its output directory";

  // The site server's port speaks HTTP, not Redis.
  std::vector<std::string> http = Args("h", seeds, "");
  http.insert(http.end(), {"--seen-redis", "redis://127.0.0.1:" + std::to_string(server_->port()),
                           "--name", "x"});
  CrawlChild not_redis(Err("h"), http);
  EXPECT_EQ(not_redis.Wait(), 1);
  EXPECT_NE(not_redis.err().find("127.0.0.1:" + std::to_string(server_->port())), std::string::npos)
      << not_redis.err();
  EXPECT_FALSE(fs::exists(dir_->path() / "h"));

  // --seen-redis without --name is a usage error.
  std::vector<std::string> unnamed = Args("u", seeds, "");
  unnamed.insert(unnamed.end(), {"--seen-redis", redis_->url()});
  CrawlChild usage(Err("u"), unnamed);
  EXPECT_EQ(usage.Wait(), 2);
  EXPECT_NE(usage.err().find("--name"), std::string::npos) << usage.err();
  EXPECT_FALSE(fs::exists(dir_->path() / "u"));
}

TEST_F(CrawlRedisTest, ARedisOutageHoldsTheCrawlUpAndLosesNothing) {
  CrawlChild crawl(Err("o"), Args("o", Seeds("o", {"/"}), "outage"));
  ASSERT_TRUE(WaitForRequests(10));
  redis_->Kill(SIGKILL);
  ASSERT_TRUE(WaitForErr(crawl, "does not answer")) << crawl.err();
  ASSERT_TRUE(redis_->Restart());
  EXPECT_EQ(crawl.Wait(), 0) << crawl.err();
  ExpectEveryPageFetched(Fetches(), 1);
  const std::string err = crawl.err();
  EXPECT_NE(err.find("answers again"), std::string::npos) << err;
  EXPECT_NE(err.find(redis_->address().ToString()), std::string::npos) << err;
}

TEST_F(CrawlRedisTest, SigintDuringAnOutageStopsWithACheckpointAndResumeFinishes) {
  const fs::path seeds = Seeds("s", {"/"});
  {
    CrawlChild crawl(Err("s"), Args("s", seeds, "stop"));
    ASSERT_TRUE(WaitForRequests(10));
    redis_->Kill(SIGKILL);
    ASSERT_TRUE(WaitForErr(crawl, "does not answer")) << crawl.err();
    crawl.Signal(SIGINT);
    EXPECT_EQ(crawl.Wait(), 0) << crawl.err();
    // The fetcher that was waiting for Redis queued its page's links without an answer.
    EXPECT_NE(crawl.err().find("queued the"), std::string::npos) << crawl.err();
  }
  ASSERT_TRUE(redis_->Restart());
  CrawlChild resumed(Err("s"), Args("s", seeds, "stop", {"--resume"}));
  EXPECT_EQ(resumed.Wait(), 0) << resumed.err();
  // The links held during the outage were queued whole: a page may be fetched twice, none lost.
  ExpectEveryPageFetched(Fetches(), 2);
}

}  // namespace
}  // namespace urlsieve
