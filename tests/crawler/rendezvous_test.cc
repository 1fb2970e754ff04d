// Rendezvous hashing of partitions over nodes (crawler/cluster/rendezvous.h) and the partition of a
// politeness key (ClusterPartitionOf).
#include "crawler/cluster/rendezvous.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "crawler/cluster/cluster_coordinator.h"

namespace urlsieve {
namespace {

constexpr uint32_t kPartitions = 1024;

std::vector<std::string> Nodes(int count, const std::string& prefix = "node-") {
  std::vector<std::string> nodes;
  for (int i = 0; i < count; ++i) {
    std::string node = prefix;
    node += std::to_string(i);
    nodes.push_back(std::move(node));
  }
  return nodes;
}

TEST(RendezvousTest, NoNodesNoOwner) {
  std::vector<std::string> none;
  EXPECT_EQ(RendezvousOwner(none, 7), -1);
}

TEST(RendezvousTest, OwnerDoesNotDependOnTheNodesOrder) {
  std::vector<std::string> nodes = Nodes(5);
  std::vector<std::string> reversed(nodes.rbegin(), nodes.rend());
  for (uint32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(nodes[RendezvousOwner(nodes, p)], reversed[RendezvousOwner(reversed, p)]);
  }
}

TEST(RendezvousTest, Balanced) {
  for (int count : {2, 3, 5, 8}) {
    std::vector<std::string> nodes = Nodes(count);
    std::vector<int> owners = RendezvousAssign(nodes, kPartitions);
    std::vector<int> share(count, 0);
    for (int owner : owners) ++share[owner];
    const double fair = static_cast<double>(kPartitions) / count;
    for (int i = 0; i < count; ++i) {
      EXPECT_GT(share[i], fair * 0.75) << count << " nodes, node " << i;
      EXPECT_LT(share[i], fair * 1.25) << count << " nodes, node " << i;
    }
  }
}

TEST(RendezvousTest, AJoinMovesOnlyTheNewNodesShare) {
  std::vector<std::string> nodes = Nodes(3);
  std::vector<int> before = RendezvousAssign(nodes, kPartitions);
  nodes.push_back("newcomer");
  std::vector<int> after = RendezvousAssign(nodes, kPartitions);
  int moved = 0;
  for (uint32_t p = 0; p < kPartitions; ++p) {
    if (after[p] != before[p]) {
      EXPECT_EQ(after[p], 3) << "partition " << p << " moved between old nodes";
      ++moved;
    }
  }
  EXPECT_GT(moved, kPartitions / 4 * 0.75);
  EXPECT_LT(moved, kPartitions / 4 * 1.25);
}

TEST(RendezvousTest, ALeaveMovesOnlyTheLeaversShare) {
  std::vector<std::string> nodes = Nodes(4);
  std::vector<int> before = RendezvousAssign(nodes, kPartitions);
  std::vector<std::string> rest = {nodes[0], nodes[1], nodes[3]};  // node-2 leaves
  std::vector<int> after = RendezvousAssign(rest, kPartitions);
  for (uint32_t p = 0; p < kPartitions; ++p) {
    if (before[p] != 2) {
      EXPECT_EQ(rest[after[p]], nodes[before[p]]) << "partition " << p << " moved";
    }
  }
}

TEST(ClusterPartitionTest, StableInRangeAndSpread) {
  std::set<uint32_t> seen;
  for (int i = 0; i < 20000; ++i) {
    std::string key = "host";
    key += std::to_string(i);
    key += ".example";
    uint32_t p = ClusterPartitionOf(key, kPartitions);
    ASSERT_LT(p, kPartitions);
    EXPECT_EQ(p, ClusterPartitionOf(key, kPartitions));
    seen.insert(p);
  }
  EXPECT_EQ(seen.size(), kPartitions);  // 20000 keys over 1024 partitions: all hit
  EXPECT_EQ(ClusterPartitionOf("anything", 1), 0u);
  // Part of the format (every node must agree, across versions): XXH3-64, multiply-high.
  EXPECT_EQ(ClusterPartitionOf("example.com", 1024), 557u);
  EXPECT_EQ(ClusterPartitionOf("http://example.com:80", 1024), 629u);
  EXPECT_EQ(ClusterPartitionOf("a", 1024), 923u);
  EXPECT_EQ(ClusterPartitionOf("a", 7), 6u);
}

}  // namespace
}  // namespace urlsieve
