// CrawlState of a node of a crawl cluster, its seen set from ClusterSeenSetSource
// (crawler/cluster/cluster_seen_set_source.h), against a real redis-server and the real
// ClusterCoordinator: the rows state.db records, the node id kept for --resume, the routed seen
// set, and every resume that must be refused with the flags that work. A join refused for a new
// state leaves nothing behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "crawler/cluster/cluster_coordinator.h"
#include "crawler/cluster/cluster_keys.h"
#include "crawler/cluster/cluster_seen_set_source.h"
#include "crawler/state/crawl_state.h"
#include "crawler/state/local_seen_set_source.h"
#include "crawler/state/shared_seen_set_source.h"
#include "dedup/redis_seen_set.h"
#include "redis/redis_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::RedisServer;

constexpr uint32_t kPartitions = 8;

class CrawlStateClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = RedisServer::Start(dir_.path() / "redis");
    ASSERT_NE(redis_, nullptr);
  }
  void TearDown() override { Leave(); }

  CrawlStateOptions StateOptions(const std::string& dir = "state") const {
    CrawlStateOptions o;
    o.dir = (dir_.path() / dir).string();
    o.capacity = 10000;
    o.fp_rate = 1e-3;
    return o;
  }
  // The real ClusterCoordinator's join of `cluster`.
  ClusterSeenSetSource::Join JoinOf(const std::string& cluster) {
    return [this, cluster](const std::string& id) -> Result<ClusterSeenSetSource::Joined> {
      joined_as_.push_back(id);
      ClusterOptions options;
      options.address = redis_->address();
      options.name = cluster;
      options.node_id = id;
      options.partitions = kPartitions;
      options.lease_ttl = std::chrono::seconds(4);
      options.handover_delay = std::chrono::milliseconds(10);
      options.settings = "{}";
      Result<std::unique_ptr<ClusterCoordinator>> joined =
          ClusterCoordinator::Join(options, nullptr);
      if (!joined.ok()) return joined.status();
      coordinator_ = std::move(*joined);
      return ClusterSeenSetSource::Joined{coordinator_->identity(), coordinator_->partitions()};
    };
  }
  // The state of a node of `cluster` (source_: its seen set's source, for its node id).
  Result<std::unique_ptr<CrawlState>> OpenNode(const std::string& cluster,
                                               const std::string& node_id = "",
                                               const std::string& dir = "state",
                                               ClusterSeenSetSource::Join join = nullptr) {
    const CrawlStateOptions state = StateOptions(dir);
    Result<RedisSeenSetOptions> options =
        CrawlRedisSeenSetOptions(redis_->url(), cluster, state, false, "server and name");
    if (!options.ok()) return options.status();
    options->new_key_stream = {std::string(kClusterInboxSuffix), std::string(kClusterInboxGroup)};
    source_ = std::make_unique<ClusterSeenSetSource>(std::move(*options), node_id,
                                                     join ? join : JoinOf(cluster));
    return CrawlState::Open(state, *source_);
  }
  // The state as a crawl with its own seen set, or over the shared set "s".
  Result<std::unique_ptr<CrawlState>> OpenStandalone() {
    LocalSeenSetSource local;
    return CrawlState::Open(StateOptions(), local);
  }
  Result<std::unique_ptr<CrawlState>> OpenShared() {
    Result<RedisSeenSetOptions> options =
        CrawlRedisSeenSetOptions(redis_->url(), "s", StateOptions(), false, "server and name");
    if (!options.ok()) return options.status();
    SharedSeenSetSource shared(std::move(*options));
    return CrawlState::Open(StateOptions(), shared);
  }
  // Hands the node's partitions back, as a crawl that ends does: its id may join again.
  void Leave() {
    if (coordinator_) {
      EXPECT_TRUE(coordinator_->Leave(false).ok());
    }
    coordinator_.reset();
  }
  void FlushAll() {
    auto client = RedisClient::Connect(redis_->address());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    ASSERT_TRUE((*client)->Run({{"FLUSHALL"}}).ok());
  }
  static void ExpectRefused(const Result<std::unique_ptr<CrawlState>>& opened,
                            const std::string& hint) {
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.status().code(), StatusCode::kFailedPrecondition)
        << opened.status().ToString();
    EXPECT_NE(opened.status().message().find(hint), std::string::npos) << opened.status().message();
  }

  testing::ScratchDir dir_{"urlsieve_crawl_state_cluster"};
  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<ClusterCoordinator> coordinator_;
  std::unique_ptr<ClusterSeenSetSource> source_;
  std::vector<std::string> joined_as_;
};

TEST_F(CrawlStateClusterTest, ANewNodeGetsAnIdThatResumeKeeps) {
  std::string node;
  {
    auto state = OpenNode("c1");
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    node = source_->node_id();
    // The host name and 6 random hex digits, in the characters a node id may have.
    const size_t dash = node.rfind('-');
    ASSERT_NE(dash, std::string::npos) << node;
    EXPECT_TRUE(dash >= 1 && dash <= 50) << node;
    EXPECT_EQ(
        node.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"),
        std::string::npos)
        << node;
    EXPECT_EQ(node.size() - dash - 1, 6u) << node;
    EXPECT_EQ(node.find_first_not_of("0123456789abcdef", dash + 1), std::string::npos) << node;
    ASSERT_EQ(joined_as_, std::vector<std::string>{node});
    // The seen set is the cluster's routed set, with a shard per partition.
    RedisSeenSet* set = source_->routed();
    ASSERT_NE(set, nullptr);
    EXPECT_EQ(&(*state)->seen_set(), set);
    const std::string key = "http://a.example/";
    const uint32_t shard = 3;
    const std::string_view keys[] = {key};
    const KeyHash hashes[] = {SeenSet::Hash(key)};
    const std::string_view payloads[] = {"claim"};
    bool is_new[1] = {false};
    ASSERT_TRUE(set->InsertRouted({&shard, 1}, keys, hashes, payloads, is_new).ok());
    EXPECT_TRUE(is_new[0]);
    EXPECT_TRUE((*state)->Checkpoint([](SqliteDb&) { return Status::Ok(); }).ok());
  }
  Leave();
  auto resumed = OpenNode("c1");
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(source_->node_id(), node);
  EXPECT_EQ(joined_as_.back(), node);  // it joined again as itself
}

TEST_F(CrawlStateClusterTest, AnIdAskedForIsRecordedAndAnotherOneIsRefusedOnResume) {
  {
    auto state = OpenNode("c1", "n1");
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    EXPECT_EQ(source_->node_id(), "n1");
  }
  Leave();
  ExpectRefused(OpenNode("c1", "n2"), "--node-id n1");
  auto same = OpenNode("c1", "n1");
  ASSERT_TRUE(same.ok()) << same.status().ToString();
}

TEST_F(CrawlStateClusterTest, ResumingWithAnotherClusterOrNoneIsRefused) {
  {
    auto state = OpenNode("c1", "n1");
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    ASSERT_TRUE((*state)->Checkpoint([](SqliteDb&) { return Status::Ok(); }).ok());
  }
  Leave();
  const std::string command = "--cluster " + redis_->url() + " --cluster-name c1";
  ExpectRefused(OpenNode("c2", "n1"), command);

  ExpectRefused(OpenStandalone(), command);
  ExpectRefused(OpenShared(), command);
}

TEST_F(CrawlStateClusterTest, AStandaloneCrawlCannotContinueAsANode) {
  {
    auto state = OpenStandalone();
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    ASSERT_TRUE((*state)->Checkpoint([](SqliteDb&) { return Status::Ok(); }).ok());
  }
  ExpectRefused(OpenNode("c1"), "resume it without --cluster");
}

TEST_F(CrawlStateClusterTest, AClusterMadeAgainSinceIsRefused) {
  {
    auto state = OpenNode("c1", "n1");
    ASSERT_TRUE(state.ok()) << state.status().ToString();
  }
  Leave();
  FlushAll();  // the cluster is gone; the next join makes a new one under the same name
  ExpectRefused(OpenNode("c1", "n1"), "made again");
}

TEST_F(CrawlStateClusterTest, AJoinRefusedForANewNodeLeavesNothingBehind) {
  auto refused =
      OpenNode("c1", "n1", "state", [](const std::string&) -> Result<ClusterSeenSetSource::Joined> {
        return Status::FailedPrecondition("settings differ");
      });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "settings differ");
  EXPECT_FALSE(fs::exists(StateOptions().dir));
  // A second node under a live node's id is refused by the cluster itself, before anything is
  // written.
  auto first = OpenNode("c1", "n1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::unique_ptr<ClusterCoordinator> keep = std::move(coordinator_);
  auto twin = OpenNode("c1", "n1", "state2");
  ASSERT_FALSE(twin.ok());
  EXPECT_FALSE(fs::exists(StateOptions("state2").dir));
  coordinator_ = std::move(keep);
}

}  // namespace
}  // namespace urlsieve
