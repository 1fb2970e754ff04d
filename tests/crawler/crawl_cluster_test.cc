// `urlsieve crawl --cluster`: crawl nodes as child processes, coordinated through a real
// redis-server on a random loopback port, crawling a 28-host site (tests/crawler/cluster_site.h:
// the generated trap site's 4 hosts and 24 "trail" hosts, one SiteServer port each). What was
// fetched, how often and how politely is read from the servers' request log, which sees every
// node's requests. Expected pages: the site's own expectations (ClusterSite::expectations), and,
// where the issue says "compared with a standalone crawl", a standalone `urlsieve crawl` of a twin
// site run in the same test. Mid-crawl events wait on the request log, never on time. The same
// three-node crawl on a Redis Cluster is in tests/crawler/cluster/ (a binary of its own).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "redis/redis_client.h"
#include "tests/crawler/cluster_crawl.h"
#include "tests/crawler/cluster_site.h"
#include "tests/crawler/pages_after_checkpoint.h"
#include "tests/support/child_process.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::ClusterCrawl;
using testing::ClusterSiteServer;
using testing::CrawlAnalysis;
using testing::CrawlChild;
using testing::RedisServer;
using testing::ScratchDir;

class CrawlClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<ScratchDir>("crawl_cluster");
    redis_ = RedisServer::Start(dir_->path() / "redis");
    ASSERT_NE(redis_, nullptr);
    site_ = ClusterSiteServer::Start();
    ASSERT_NE(site_, nullptr);
    crawl_ =
        std::make_unique<ClusterCrawl>(dir_->path() / "crawl", redis_->url(), "c13", site_.get());
  }

  // Polls `urlsieve cluster status --json` (deadline 60 s) until `done` holds; the last status.
  ClusterCrawl::CommandResult WaitForStatus(
      const std::function<bool(const nlohmann::json&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    ClusterCrawl::CommandResult status;
    while (std::chrono::steady_clock::now() < deadline) {
      status = crawl_->Status();
      if (status.exit == 0 && status.json.is_object() && done(status.json)) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling the status
    }
    ADD_FAILURE() << "the status never showed what was waited for; last: " << status.out
                  << status.err;
    return status;
  }

  // Redis keys whose name mentions `text`.
  long long RedisKeysWith(const std::string& text) {
    auto client = RedisClient::Connect(redis_->address());
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) return -1;
    auto reply = (*client)->Run({{"KEYS", "*" + text + "*"}});
    return reply.ok() ? static_cast<long long>(reply->elements.size()) : -1;
  }

  uint64_t PagesOf(const std::string& node) const {
    const nlohmann::json stats = crawl_->Stats(node);
    EXPECT_TRUE(stats.is_object()) << node << " wrote no stats.json";
    return stats.is_object() ? stats.value("pages", uint64_t{0}) : 0;
  }

  std::unique_ptr<ScratchDir> dir_;
  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<ClusterSiteServer> site_;
  std::unique_ptr<ClusterCrawl> crawl_;
};

// Whether every one of `nodes` is still running.
std::function<bool()> Running(std::vector<const testing::UrlsieveChild*> nodes) {
  return [nodes] {
    return std::none_of(nodes.begin(), nodes.end(),
                        [](const testing::UrlsieveChild* node) { return node->exited(); });
  };
}

// The resources of `a` not in `b`, for messages.
std::string Difference(const std::set<CrawlAnalysis::Resource>& a,
                       const std::set<CrawlAnalysis::Resource>& b) {
  std::vector<CrawlAnalysis::Resource> only;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only));
  return only.empty() ? " none" : CrawlAnalysis::Describe(only);
}

TEST_F(CrawlClusterTest, ThreeNodesFetchEveryPageOnceAndPolitelyAcrossTwentyEightHosts) {
  testing::ExpectThreeNodesCrawlEachPageOnce(*crawl_);
}

TEST_F(CrawlClusterTest, KillNineOneNodeMidCrawlTheOthersFinishAndNoPageIsMissing) {
  // The reference: a standalone crawl of a twin site (same pages, other ports) with the same
  // options, running meanwhile.
  auto twin = ClusterSiteServer::Start();
  ASSERT_NE(twin, nullptr);
  ClusterCrawl reference(dir_->path() / "reference", "", "", twin.get());
  auto alone = reference.StartStandalone("alone");

  auto n1 = crawl_->StartNode("n1");
  auto n2 = crawl_->StartNode("n2");
  auto n3 = crawl_->StartNode("n3");
  ASSERT_TRUE(site_->WaitForPages(site_->site().expected_pages() / 4, Running({&*n1, &*n2, &*n3})))
      << crawl_->Diagnostics();
  // Killed after a checkpoint of it: what that checkpoint holds must not be fetched again.
  ASSERT_TRUE(testing::WaitForCheckpointedPages(crawl_->Out("n2"), Running({&*n1, &*n2, &*n3})))
      << crawl_->Diagnostics();
  n2->Signal(SIGKILL);
  EXPECT_EQ(n2->Wait(), 128 + SIGKILL);
  EXPECT_EQ(n1->Wait(), 0) << n1->err();
  EXPECT_EQ(n3->Wait(), 0) << n3->err();
  EXPECT_EQ(alone->Wait(), 0) << alone->err();

  // At most what the killed node fetched after its last checkpoint is fetched again (its entries
  // are acknowledged with its checkpoints): the pages it recorded since, and those its fetchers
  // held. Every page fetched twice was fetched by it.
  const uint64_t checkpointed = testing::CheckpointedPages(crawl_->Out("n2"));
  const std::vector<site::LoggedRequest> log = site_->log().Snapshot();
  uint64_t killed_pages = 0;  // the killed node's page requests
  for (const site::LoggedRequest& r : log) {
    killed_pages += r.user_agent == "urlsieve/n2" && !testing::IsRobotsResource(r.resource) ? 1 : 0;
  }
  ASSERT_GT(checkpointed, 0u);
  ASSERT_GE(killed_pages, checkpointed);
  const size_t after_checkpoint = static_cast<size_t>(killed_pages - checkpointed);
  const CrawlAnalysis cluster = crawl_->ExpectCorrectCrawl(after_checkpoint);
  std::cout << "kill -9: " << cluster.duplicates << " pages fetched twice; the killed node made "
            << killed_pages << " page requests, " << checkpointed
            << " recorded in its last checkpoint\n";
  for (const CrawlAnalysis::Resource& resource : cluster.duplicated_resources) {
    const std::vector<std::string>& by = cluster.agents.at(resource);
    EXPECT_NE(std::find(by.begin(), by.end(), "urlsieve/n2"), by.end())
        << "fetched twice, not by the killed node: " << resource.second << " on host "
        << resource.first;
  }
  const CrawlAnalysis standalone = reference.ExpectCorrectCrawl(0);
  EXPECT_EQ(cluster.fetched, standalone.fetched)
      << "missing compared with the standalone crawl:"
      << Difference(standalone.fetched, cluster.fetched) << "\nnot fetched by the standalone crawl:"
      << Difference(cluster.fetched, standalone.fetched);

  const ClusterCrawl::CommandResult status = crawl_->Status();
  ASSERT_EQ(status.exit, 0) << status.err;
  EXPECT_EQ(status.json.value("pending", -1), 0) << status.out;
  const nlohmann::json killed = ClusterCrawl::NodeOf(status.json, "n2");
  ASSERT_TRUE(killed.is_object()) << status.out;
  EXPECT_FALSE(killed.value("alive", true)) << status.out;
  EXPECT_EQ(killed.value("partitions", -1), 0) << status.out;  // its leases lapsed
}

TEST_F(CrawlClusterTest, ANodeJoiningMidCrawlTakesOverPartitionsAndFetchesWithoutDuplicates) {
  auto n1 = crawl_->StartNode("n1");
  auto n2 = crawl_->StartNode("n2");
  // Early: every trail host still has most of its pages to be discovered.
  ASSERT_TRUE(site_->WaitForPages(site_->site().expected_pages() / 10, Running({&*n1, &*n2})))
      << crawl_->Diagnostics();
  auto n3 = crawl_->StartNode("n3", /*with_seeds=*/false);
  const ClusterCrawl::CommandResult joined = WaitForStatus([](const nlohmann::json& status) {
    const nlohmann::json joiner = ClusterCrawl::NodeOf(status, "n3");
    return joiner.is_object() && joiner.value("partitions", 0) > 0;
  });
  const nlohmann::json entry = ClusterCrawl::NodeOf(joined.json, "n3");
  ASSERT_TRUE(entry.is_object()) << joined.out;
  EXPECT_TRUE(entry.value("alive", false)) << joined.out;
  EXPECT_EQ(n1->Wait(), 0) << n1->err();
  EXPECT_EQ(n2->Wait(), 0) << n2->err();
  EXPECT_EQ(n3->Wait(), 0) << n3->err();

  const CrawlAnalysis a = crawl_->ExpectCorrectCrawl(0);
  EXPECT_GT(PagesOf("n3"), 0u) << "the node that joined fetched nothing" << crawl_->Diagnostics();
  EXPECT_EQ(a.requests_by.count("urlsieve/n3"), 1u)
      << "the servers saw no request of the joined node";
  EXPECT_EQ(PagesOf("n1") + PagesOf("n2") + PagesOf("n3"), a.page_requests);
}

TEST_F(CrawlClusterTest, SigintHandsPartitionsBackAndResumeContinuesAsTheSameNode) {
  auto n1 = crawl_->StartNode("n1");
  auto n2 = crawl_->StartNode("n2");
  auto n3 = crawl_->StartNode("n3");
  ASSERT_TRUE(site_->WaitForPages(site_->site().expected_pages() / 4, Running({&*n1, &*n2, &*n3})))
      << crawl_->Diagnostics();
  n2->Signal(SIGINT);
  EXPECT_EQ(n2->Wait(), 0) << n2->err();
  // Handed back: the node says it stopped and holds no lease.
  const ClusterCrawl::CommandResult stopped = crawl_->Status();
  ASSERT_EQ(stopped.exit, 0) << stopped.err;
  const nlohmann::json entry = ClusterCrawl::NodeOf(stopped.json, "n2");
  ASSERT_TRUE(entry.is_object()) << stopped.out;
  EXPECT_EQ(entry.value("state", ""), "stopped") << stopped.out;
  EXPECT_EQ(entry.value("partitions", -1), 0) << stopped.out;

  // --resume without --node-id: the node's state says who it is.
  std::vector<std::string> args = crawl_->NodeArgs("n2", true, {"--resume"});
  const auto id = std::find(args.begin(), args.end(), "--node-id");
  ASSERT_NE(id, args.end());
  args.erase(id, id + 2);
  CrawlChild resumed(crawl_->Err("n2"), args);
  EXPECT_EQ(resumed.Wait(), 0) << resumed.err();
  EXPECT_EQ(n1->Wait(), 0) << n1->err();
  EXPECT_EQ(n3->Wait(), 0) << n3->err();

  const CrawlAnalysis a = crawl_->ExpectCorrectCrawl(0);
  const nlohmann::json stats = crawl_->Stats("n2");
  ASSERT_TRUE(stats.is_object()) << "n2 wrote no stats.json";
  EXPECT_EQ(stats.value("node_id", ""), "n2") << stats.dump();
  EXPECT_EQ(stats.value("sessions", 0), 2) << stats.dump();
  EXPECT_EQ(PagesOf("n1") + PagesOf("n2") + PagesOf("n3"), a.page_requests);
  const ClusterCrawl::CommandResult status = crawl_->Status();
  ASSERT_EQ(status.exit, 0) << status.err;
  EXPECT_EQ(status.json.value("pending", -1), 0) << status.out;
  EXPECT_EQ(status.json["nodes"].size(), 3u) << status.out;  // n2 came back as itself
}

// A seeds file whose one URL is disallowed: a crawl that ends at once.
fs::path TinySeeds(const fs::path& dir, const ClusterSiteServer& site) {
  const fs::path seeds = dir / "tiny-seeds.txt";
  std::ofstream(seeds) << site.site().Seeds().back() << "t/private/1\n";
  return seeds;
}

TEST_F(CrawlClusterTest, ASecondClusterWithTheSameNameAndOtherOptionsIsRefused) {
  const fs::path seeds = TinySeeds(crawl_->dir(), *site_);
  CrawlChild first(
      crawl_->Err("first"),
      crawl_->NodeArgs("first", false, {"--seeds", seeds.string(), "--partitions", "64"}));
  ASSERT_EQ(first.Wait(), 0) << first.err();

  CrawlChild other(
      crawl_->Err("other"),
      crawl_->NodeArgs("other", false, {"--seeds", seeds.string(), "--partitions", "128"}));
  EXPECT_EQ(other.Wait(), 1);
  const std::string err = other.err();
  EXPECT_NE(err.find("partitions"), std::string::npos) << err;
  EXPECT_NE(err.find("64"), std::string::npos) << err;
  EXPECT_NE(err.find("128"), std::string::npos) << err;
  EXPECT_NE(err.find(crawl_->name()), std::string::npos) << err;
  EXPECT_EQ(RedisKeysWith("node:other"), 0) << "the refused node registered";
  EXPECT_FALSE(fs::exists(crawl_->Out("other"))) << "the refused node wrote its output directory";

  // Another scope: the nodes would not agree on which links are followed.
  CrawlChild deeper(
      crawl_->Err("deeper"),
      crawl_->NodeArgs("deeper", false,
                       {"--seeds", seeds.string(), "--partitions", "64", "--deny", "/elsewhere/"}));
  EXPECT_EQ(deeper.Wait(), 1);
  EXPECT_NE(deeper.err().find("deny"), std::string::npos) << deeper.err();
  EXPECT_EQ(RedisKeysWith("node:deeper"), 0);

  // The cluster is as the first node left it.
  const ClusterCrawl::CommandResult status = crawl_->Status();
  ASSERT_EQ(status.exit, 0) << status.err;
  EXPECT_EQ(status.json.value("partitions", 0), 64) << status.out;
  EXPECT_EQ(status.json["nodes"].size(), 1u) << status.out;
}

TEST_F(CrawlClusterTest, ANodeWithAnotherCanonicalizationIsRefused) {
  const fs::path seeds = TinySeeds(crawl_->dir(), *site_);
  CrawlChild first(crawl_->Err("first"),
                   crawl_->NodeArgs("first", false, {"--seeds", seeds.string()}));
  ASSERT_EQ(first.Wait(), 0) << first.err();

  // The same options, but its URLs' keys would differ: sort_query = true.
  const fs::path config = crawl_->dir() / "sorted.toml";
  std::ofstream(config) << testing::ReadFile(crawl_->config())
                        << "[canonicalize]\nsort_query = true\n";
  std::vector<std::string> args = crawl_->NodeArgs("sorted", false, {"--seeds", seeds.string()});
  std::replace(args.begin(), args.end(), crawl_->config().string(), config.string());
  CrawlChild sorted(crawl_->Err("sorted"), args);
  EXPECT_EQ(sorted.Wait(), 1);
  EXPECT_NE(sorted.err().find("sort_query"), std::string::npos) << sorted.err();
  EXPECT_EQ(RedisKeysWith("node:sorted"), 0) << "the refused node registered";
  EXPECT_FALSE(fs::exists(crawl_->Out("sorted")));
}

// Issue 24: a node with --ignore-robots joined a cluster whose nodes obey robots.txt; delay and
// user agent were not compared. A site must see one crawler's manners, whichever node asks.
TEST_F(CrawlClusterTest, ANodeWithOtherMannersIsRefused) {
  const fs::path seeds = TinySeeds(crawl_->dir(), *site_);
  CrawlChild first(crawl_->Err("first"),
                   crawl_->NodeArgs("first", false, {"--seeds", seeds.string()}));
  ASSERT_EQ(first.Wait(), 0) << first.err();
  const std::vector<std::pair<std::string, std::vector<std::string>>> others = {
      {"obey_robots", {"--ignore-robots"}},
      {"robots_agent", {"--user-agent", "other-bot/1.0"}},
      {"delay_ms", {"--delay-ms", "7"}},
      {"default_encoding", {"--default-encoding", "utf-8"}}};
  for (size_t i = 0; i < others.size(); ++i) {
    const auto& [key, flags] = others[i];
    SCOPED_TRACE(key);
    const std::string node = "n" + std::to_string(i);
    std::vector<std::string> args = crawl_->NodeArgs(node, false, {"--seeds", seeds.string()});
    // The flag's value replaces the one every node gets (CrawlArgs), or is added.
    auto given = std::find(args.begin(), args.end(), flags[0]);
    if (given != args.end() && flags.size() == 2) {
      *(given + 1) = flags[1];
    } else {
      args.insert(args.end(), flags.begin(), flags.end());
    }
    CrawlChild refused(crawl_->Err(node), args);
    EXPECT_EQ(refused.Wait(), 1);
    EXPECT_NE(refused.err().find(key), std::string::npos) << refused.err();
    EXPECT_EQ(RedisKeysWith("node:" + node), 0) << "the refused node registered";
  }
}

// A loopback port nobody listens on (bound, then closed).
int UnusedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

TEST_F(CrawlClusterTest, UnreachableRedisAtStartIsAClearErrorNamingTheServer) {
  const std::string server = "127.0.0.1:" + std::to_string(UnusedPort());
  ClusterCrawl nowhere(dir_->path() / "nowhere", "redis://" + server, "c13", site_.get());
  auto node = nowhere.StartNode("n1");
  EXPECT_EQ(node->Wait(std::chrono::seconds(60)), 1);
  EXPECT_NE(node->err().find(server), std::string::npos) << node->err();
  EXPECT_FALSE(fs::exists(nowhere.Out("n1"))) << "it wrote its output directory";

  const ClusterCrawl::CommandResult status = nowhere.Status();
  EXPECT_EQ(status.exit, 1);
  EXPECT_NE(status.err.find(server), std::string::npos) << status.err;
}

TEST_F(CrawlClusterTest, StatusOfAnUnknownClusterIsAClearError) {
  const ClusterCrawl::CommandResult status = crawl_->Status("no-such-cluster");
  EXPECT_EQ(status.exit, 1);
  EXPECT_NE(status.err.find("no-such-cluster"), std::string::npos) << status.err;
  EXPECT_NE(status.err.find(redis_->address().ToString()), std::string::npos) << status.err;
  EXPECT_EQ(RedisKeysWith("no-such-cluster"), 0) << "status created something";
}

}  // namespace
}  // namespace urlsieve
