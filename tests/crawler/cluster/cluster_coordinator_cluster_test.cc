// ClusterCoordinator and ReadClusterStatus on a real 3-master Redis Cluster
// (tests/support/redis_cluster.h): the partitions' keys spread over the masters' slots, the
// cluster's own keys in one; every Function call is routed by its first key.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "crawler/cluster/cluster_coordinator.h"
#include "crawler/cluster/cluster_keys.h"
#include "crawler/cluster/rendezvous.h"
#include "dedup/redis_seen_set.h"
#include "redis/redis_client.h"
#include "tests/support/redis_cluster.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using std::chrono::milliseconds;
using testing::RedisCluster;
using testing::ScratchDir;

bool WaitFor(const std::function<bool()>& condition) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(5));  // polling, not synchronisation
  }
  return condition();
}

std::set<uint32_t> Valid(const ClusterCoordinator& node) {
  std::set<uint32_t> held;
  for (uint32_t p = 0; p < node.partitions(); ++p) {
    if (node.MayFetch(p)) held.insert(p);
  }
  return held;
}

std::set<uint32_t> Share(const std::vector<std::string>& nodes, size_t i, uint32_t partitions) {
  std::set<uint32_t> share;
  std::vector<int> owners = RendezvousAssign(nodes, partitions);
  for (uint32_t p = 0; p < partitions; ++p) {
    if (owners[p] == static_cast<int>(i)) share.insert(p);
  }
  return share;
}

TEST(ClusterCoordinatorOnRedisClusterTest, SplitsPollsAcksFinishesAndSurvivesADeadNode) {
  ScratchDir dir("cluster_coordinator_cluster");
  auto cluster = RedisCluster::Start(dir.path());
  ASSERT_NE(cluster, nullptr);
  auto raw = RedisClient::Connect(cluster->address());
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  ASSERT_TRUE((*raw)->is_cluster());

  constexpr uint32_t kParts = 16;
  auto options = [&](const std::string& node) {
    ClusterOptions o;
    o.address = cluster->address();
    o.name = "cc";
    o.node_id = node;
    o.partitions = kParts;
    o.lease_ttl = milliseconds(1000);
    o.handover_delay = milliseconds(100);
    o.settings = R"({"canonicalization":"default"})";
    return o;
  };
  auto a = ClusterCoordinator::Join(options("a"), nullptr);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = ClusterCoordinator::Join(options("b"), nullptr);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const std::set<uint32_t> share_a = Share({"a", "b"}, 0, kParts);
  const std::set<uint32_t> share_b = Share({"a", "b"}, 1, kParts);
  ASSERT_TRUE(WaitFor([&] { return Valid(**a) == share_a && Valid(**b) == share_b; }));

  // One entry per partition, as the routed seen set appends them.
  std::set<std::string> payloads;
  for (uint32_t p = 0; p < kParts; ++p) {
    const std::string inbox = ClusterInboxKey("cc", p);
    auto group = (*raw)->Run(RedisCommand{
        {"XGROUP", "CREATE", inbox, std::string(kClusterInboxGroup), "0", "MKSTREAM"}, 2});
    ASSERT_TRUE(group.ok()) << group.status().ToString();
    std::string payload = "url-";
    payload += std::to_string(p);
    auto id = (*raw)->Run(RedisCommand{{"XADD", inbox, "*", "c", payload}, 1});
    ASSERT_TRUE(id.ok() && !id->is_error());
    payloads.insert(payload);
  }
  std::map<std::string, std::vector<InboxEntry>> got;
  std::set<std::string> seen;
  ASSERT_TRUE(WaitFor([&] {
    const std::vector<std::pair<ClusterCoordinator*, std::string>> nodes = {{a->get(), "a"},
                                                                            {b->get(), "b"}};
    for (const auto& [node, name] : nodes) {
      auto entries = node->Poll(64);
      EXPECT_TRUE(entries.ok()) << entries.status().ToString();
      if (!entries.ok()) continue;
      for (InboxEntry& entry : *entries) {
        EXPECT_TRUE(seen.insert(entry.payload).second) << entry.payload << " twice";
        EXPECT_TRUE((name[0] == 'a' ? share_a : share_b).count(entry.partition));
        got[name].push_back(std::move(entry));
      }
    }
    return seen.size() == kParts;
  }));
  EXPECT_EQ(seen, payloads);

  auto status = ReadClusterStatus(cluster->address(), "cc");
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(status->nodes.size(), 2u);
  EXPECT_EQ(status->unowned_partitions, 0u);
  EXPECT_EQ(status->pending, kParts);
  EXPECT_EQ(status->in_flight, kParts);

  // a acknowledges its entries; b dies with its own in flight: a claims them after the TTL.
  ASSERT_TRUE((*a)->Ack(got["a"]).ok());
  b->reset();
  std::set<std::string> back;
  std::vector<InboxEntry> claimed;
  ASSERT_TRUE(WaitFor([&] {
    auto entries = (*a)->Poll(64);
    EXPECT_TRUE(entries.ok()) << entries.status().ToString();
    if (entries.ok()) {
      for (InboxEntry& entry : *entries) {
        back.insert(entry.payload);
        claimed.push_back(std::move(entry));
      }
    }
    return back.size() == got["b"].size();
  }));
  for (const InboxEntry& entry : got["b"]) EXPECT_TRUE(back.count(entry.payload));
  ASSERT_TRUE((*a)->Ack(claimed).ok());
  ASSERT_TRUE((*a)->MarkSeeded().ok());
  ASSERT_TRUE(WaitFor([&] {
    auto finished = (*a)->Finished();
    EXPECT_TRUE(finished.ok()) << finished.status().ToString();
    return finished.ok() && *finished;
  }));
  EXPECT_EQ(Valid(**a).size(), kParts);
  ASSERT_TRUE((*a)->Leave(true).ok());
  status = ReadClusterStatus(cluster->address(), "cc");
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->pending, 0u);
  EXPECT_TRUE(status->seeded);
  EXPECT_EQ(status->unowned_partitions, kParts);
}

}  // namespace
}  // namespace urlsieve
