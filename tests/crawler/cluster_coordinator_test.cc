// ClusterCoordinator and ReadClusterStatus (crawler/cluster/cluster_coordinator.h) against a real
// redis-server on a random loopback port, with small TTLs (lease 1 s, hand-over 100 ms). The
// inboxes are filled as the routed seen set's Function does (XGROUP CREATE ... MKSTREAM, then
// XADD <inbox> * c <payload>). Every wait is a poll with a deadline.
#include "crawler/cluster/cluster_coordinator.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "crawler/cluster/cluster_delete.h"
#include "crawler/cluster/cluster_keys.h"
#include "crawler/cluster/rendezvous.h"
#include "dedup/redis_seen_set.h"
#include "redis/redis_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using std::chrono::milliseconds;
using testing::RedisServer;
using testing::ScratchDir;

constexpr auto kDeadline = std::chrono::seconds(30);

// Polls `condition` every few milliseconds until it holds or the deadline passes.
bool WaitFor(const std::function<bool()>& condition, std::chrono::seconds deadline = kDeadline) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(5));  // polling, not synchronisation
  }
  return condition();
}

// prefix + number (not "x" + std::to_string(n): GCC 12 -O3 warns falsely, -Wrestrict).
std::string Numbered(std::string_view prefix, long long number) {
  std::string out(prefix);
  out += std::to_string(number);
  return out;
}

// Whether the crawl is over; a failure to tell is a test failure.
bool FinishedNow(ClusterCoordinator& node) {
  auto finished = node.Finished();
  EXPECT_TRUE(finished.ok()) << finished.status().ToString();
  return finished.ok() && *finished;
}

class ClusterCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(RedisServer::Options()); }

  void StartServer(RedisServer::Options options) {
    server_.reset();
    server_ = RedisServer::Start(scratch_.path() / "redis", std::move(options));
    ASSERT_NE(server_, nullptr);
    auto client = RedisClient::Connect(server_->address());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    raw_ = std::move(client).value();
  }

  ClusterOptions Options(const std::string& node, uint32_t partitions = 16) {
    ClusterOptions options;
    options.address = server_->address();
    options.name = "crawl1";
    options.node_id = node;
    options.partitions = partitions;
    options.lease_ttl = milliseconds(1000);
    options.handover_delay = milliseconds(100);
    options.settings = R"({"canonicalization":"default","fp_rate":0.001})";
    options.timeouts.command_s = 2.0;
    options.timeouts.connect_s = 0.5;
    return options;
  }

  std::unique_ptr<ClusterCoordinator> MustJoin(const ClusterOptions& options,
                                               std::vector<std::string>* notices = nullptr) {
    auto joined = ClusterCoordinator::Join(options, notices);
    EXPECT_TRUE(joined.ok()) << joined.status().ToString();
    if (!joined.ok()) return nullptr;
    return std::move(joined).value();
  }

  RedisReply Run(std::vector<std::string> argv) {
    auto reply = raw_->Run(RedisCommand{std::move(argv), 1});
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    return reply.ok() ? *reply : RedisReply{};
  }

  // What the routed seen set's Function does for a URL new to partition p.
  std::string Append(const std::string& name, uint32_t partition, const std::string& payload) {
    const std::string inbox = ClusterInboxKey(name, partition);
    Run({"XGROUP", "CREATE", inbox, std::string(kClusterInboxGroup), "0",
         "MKSTREAM"});  // or BUSYGROUP
    RedisReply id = Run({"XADD", inbox, "*", "c", payload});
    EXPECT_EQ(id.type, RedisReply::Type::kString) << id.str;
    appended_.push_back(partition);
    return id.str;
  }
  // As another node's append becomes known: that node publishes the partition in its next list
  // of partitions appended to (here a node whose heartbeat expired long ago, so that it owns
  // nothing).
  void AnotherNodeAppended(const std::string& name, uint32_t partition) {
    Run({"HINCRBY", ClusterNodeKey(name, "writer"), "appended", "1"});
    Run({"HSET", ClusterNodeKey(name, "writer"), "appended_to", std::to_string(partition)});
    Run({"ZADD", ClusterNodesKey(name), "1", "writer"});
  }

  std::string Lease(const std::string& name, uint32_t partition) {
    return Run({"GET", ClusterLeaseKey(name, partition)}).str;
  }

  static std::set<uint32_t> Valid(const ClusterCoordinator& node) {
    std::set<uint32_t> held;
    for (uint32_t p = 0; p < node.partitions(); ++p) {
      if (node.MayFetch(p)) held.insert(p);
    }
    return held;
  }

  // The partitions `nodes[i]` wants by rendezvous among all of `nodes`.
  static std::set<uint32_t> Share(const std::vector<std::string>& nodes, size_t i,
                                  uint32_t partitions) {
    std::set<uint32_t> share;
    std::vector<int> owners = RendezvousAssign(nodes, partitions);
    for (uint32_t p = 0; p < partitions; ++p) {
      if (owners[p] == static_cast<int>(i)) share.insert(p);
    }
    return share;
  }

  // Polls until `count` entries came (or the deadline). The node is first told of the partitions
  // Append wrote to, as the node that appended tells it (ClusterCoordinator::Nudge).
  std::vector<InboxEntry> PollUntil(ClusterCoordinator& node, size_t count) {
    node.Nudge(appended_);
    appended_.clear();
    std::vector<InboxEntry> got;
    WaitFor([&] {
      auto entries = node.Poll(64);
      // kUnavailable is for the caller to retry (a pooled connection across a Redis restart).
      EXPECT_TRUE(entries.ok() || entries.status().code() == StatusCode::kUnavailable)
          << entries.status().ToString();
      if (entries.ok()) got.insert(got.end(), entries->begin(), entries->end());
      return got.size() >= count;
    });
    return got;
  }

  ScratchDir scratch_{"cluster_coordinator"};
  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<RedisClient> raw_;
  std::vector<uint32_t> appended_;  // partitions Append wrote to, for the next PollUntil
};

TEST_F(ClusterCoordinatorTest, CreatesThenJoins) {
  std::vector<std::string> notices;
  auto a = MustJoin(Options("a"), &notices);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->identity().size(), 32u);
  EXPECT_EQ(a->partitions(), 16u);
  EXPECT_EQ(a->node_id(), "a");
  EXPECT_NE(a->what().find("crawl1"), std::string::npos);
  EXPECT_NE(a->what().find(server_->url()), std::string::npos);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].rfind("created", 0), 0u) << notices[0];

  notices.clear();
  // The same settings in another order and spacing are the same settings.
  ClusterOptions options = Options("b");
  options.settings = R"({ "fp_rate": 0.001, "canonicalization": "default" })";
  auto b = MustJoin(options, &notices);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->identity(), a->identity());
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].rfind("joined", 0), 0u) << notices[0];
  EXPECT_TRUE(a->error().ok());
}

TEST_F(ClusterCoordinatorTest, RefusesOtherSettingsNamingTheKeys) {
  auto a = MustJoin(Options("a"));
  ASSERT_NE(a, nullptr);
  ClusterOptions options = Options("b");
  options.settings = R"({"canonicalization":"strict","fp_rate":0.001,"scope":"host"})";
  auto b = ClusterCoordinator::Join(options, nullptr);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kFailedPrecondition);
  const std::string& message = b.status().message();
  EXPECT_NE(message.find("canonicalization"), std::string::npos) << message;
  EXPECT_NE(message.find("scope"), std::string::npos) << message;
  EXPECT_EQ(message.find("fp_rate"), std::string::npos) << message;
  EXPECT_NE(message.find(server_->url()), std::string::npos) << message;
  EXPECT_NE(message.find("crawl1"), std::string::npos) << message;
  // Nothing was written for the refused node.
  EXPECT_EQ(Run({"EXISTS", ClusterNodeKey("crawl1", "b")}).integer, 0);
}

TEST_F(ClusterCoordinatorTest, RefusesOtherPartitions) {
  auto a = MustJoin(Options("a", 16));
  ASSERT_NE(a, nullptr);
  auto b = ClusterCoordinator::Join(Options("b", 32), nullptr);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(b.status().message().find("16 partitions"), std::string::npos) << b.status().message();
  EXPECT_NE(b.status().message().find("32"), std::string::npos) << b.status().message();
}

TEST_F(ClusterCoordinatorTest, RefusesBadOptions) {
  ClusterOptions options = Options("bad id!");
  EXPECT_EQ(ClusterCoordinator::Join(options, nullptr).status().code(),
            StatusCode::kInvalidArgument);
  options = Options("a");
  options.handover_delay = milliseconds(600);  // not below lease_ttl / 2
  EXPECT_EQ(ClusterCoordinator::Join(options, nullptr).status().code(),
            StatusCode::kInvalidArgument);
  options = Options("a");
  options.settings = "[1,2]";
  EXPECT_EQ(ClusterCoordinator::Join(options, nullptr).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(ClusterCoordinatorTest, UnreachableRedisIsUnavailable) {
  ClusterOptions options = Options("a");
  server_->Kill();
  auto a = ClusterCoordinator::Join(options, nullptr);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(a.status().message().find(std::to_string(server_->port())), std::string::npos)
      << a.status().message();
}

TEST_F(ClusterCoordinatorTest, RefusesALiveNodeWithTheSameId) {
  auto a = MustJoin(Options("a"));
  ASSERT_NE(a, nullptr);
  auto again = ClusterCoordinator::Join(Options("a"), nullptr);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.status().message().find("live node 'a'"), std::string::npos)
      << again.status().message();
  // After a Leave the id is free at once.
  ASSERT_TRUE(a->Leave(false).ok());
  a.reset();
  auto back = ClusterCoordinator::Join(Options("a"), nullptr);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  // A node that died (destroyed without Leave) frees its id once its heartbeat expires.
  back->reset();
  EXPECT_TRUE(WaitFor([&] { return ClusterCoordinator::Join(Options("a"), nullptr).ok(); }));
}

// --resume after a kill -9: the node's record is still live, but its process (on this host) is
// gone: the new instance takes over at once. One whose process runs is refused.
TEST_F(ClusterCoordinatorTest, TakesOverFromADeadInstanceOnThisHost) {
  auto b = MustJoin(Options("b"));
  ASSERT_NE(b, nullptr);
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);  // a pid that no longer runs
  auto fake = [&](pid_t pid) {
    Run({"HSET", ClusterNodeKey("crawl1", "a"), "token", "old", "host", host, "pid",
         std::to_string(pid), "state", "running"});
    // A heartbeat expiry far ahead (server time in ms: TIME's seconds * 1000 + a minute).
    RedisReply time = raw_->Run(RedisCommand{{"TIME"}, -1}).value();
    long long now_ms = std::atoll(time.elements[0].str.c_str()) * 1000;
    Run({"ZADD", ClusterNodesKey("crawl1"), std::to_string(now_ms + 60000), "a"});
  };
  fake(::getppid());  // alive
  auto refused = ClusterCoordinator::Join(Options("a"), nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("live node 'a'"), std::string::npos);
  fake(child);  // gone
  std::vector<std::string> notices;
  auto a = MustJoin(Options("a"), &notices);
  ASSERT_NE(a, nullptr);
  bool said = false;
  for (const std::string& notice : notices)
    said = said || notice.find("takes over") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_TRUE(WaitFor([&] { return !Valid(*a).empty(); }));
}

TEST_F(ClusterCoordinatorTest, NodesSplitPartitionsAndAJoinMovesOnlyItsShare) {
  constexpr uint32_t kParts = 32;
  auto a = MustJoin(Options("a", kParts));
  auto b = MustJoin(Options("b", kParts));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::vector<ClusterCoordinator*> nodes = {a.get(), b.get()};
  // At most one node may fetch from a partition at any moment: checked as X, Y, X (see
  // AtMostOneOwner) for every pair, on every observation.
  auto at_most_one_owner = [&](const std::vector<ClusterCoordinator*>& list) {
    for (uint32_t p = 0; p < kParts; ++p) {
      for (size_t i = 0; i < list.size(); ++i) {
        for (size_t j = 0; j < list.size(); ++j) {
          if (i == j) continue;
          bool x1 = list[i]->MayFetch(p);
          bool y = list[j]->MayFetch(p);
          bool x2 = list[i]->MayFetch(p);
          EXPECT_FALSE(x1 && y && x2) << "partition " << p << " held by two nodes";
          if (x1 && y && x2) return false;
        }
      }
    }
    return true;
  };
  const std::set<uint32_t> share_a = Share({"a", "b"}, 0, kParts);
  const std::set<uint32_t> share_b = Share({"a", "b"}, 1, kParts);
  ASSERT_TRUE(WaitFor([&] {
    at_most_one_owner(nodes);
    return Valid(*a) == share_a && Valid(*b) == share_b;
  })) << Valid(*a).size()
      << " + " << Valid(*b).size();

  auto c = MustJoin(Options("c", kParts));
  ASSERT_NE(c, nullptr);
  nodes.push_back(c.get());
  const std::vector<std::string> ids = {"a", "b", "c"};
  const std::set<uint32_t> new_a = Share(ids, 0, kParts);
  const std::set<uint32_t> new_b = Share(ids, 1, kParts);
  const std::set<uint32_t> new_c = Share(ids, 2, kParts);
  EXPECT_FALSE(new_c.empty());
  ASSERT_TRUE(WaitFor([&] {
    at_most_one_owner(nodes);
    const std::set<uint32_t> va = Valid(*a);
    const std::set<uint32_t> vb = Valid(*b);
    // Nothing moves between a and b: each holds only what it held before.
    for (uint32_t p : va) EXPECT_TRUE(share_a.count(p)) << "a took " << p;
    for (uint32_t p : vb) EXPECT_TRUE(share_b.count(p)) << "b took " << p;
    return va == new_a && vb == new_b && Valid(*c) == new_c;
  }));
  // Only c's share moved.
  for (uint32_t p : new_a) EXPECT_TRUE(share_a.count(p));
  for (uint32_t p : new_b) EXPECT_TRUE(share_b.count(p));

  // c leaves: its share goes back to a and b as before.
  ASSERT_TRUE(c->Leave(false).ok());
  nodes.pop_back();
  ASSERT_TRUE(WaitFor([&] {
    at_most_one_owner(nodes);
    return Valid(*a) == share_a && Valid(*b) == share_b;
  }));
}

// A partition wanted by a newcomer is released only once nothing read from it is outstanding,
// and with the cool-down ("released") before the newcomer takes it.
class DrainTest : public ClusterCoordinatorTest, public ::testing::WithParamInterface<bool> {};

TEST_P(DrainTest, ReleasesAfterAckOrForgetWithTheCoolDown) {
  const bool ack = GetParam();
  constexpr uint32_t kParts = 8;
  ClusterOptions options_a = Options("a", kParts);
  options_a.handover_delay = milliseconds(300);
  options_a.lease_ttl = milliseconds(2000);
  auto a = MustJoin(options_a);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Valid(*a).size() == kParts; }));
  const std::set<uint32_t> share_b = Share({"a", "b"}, 1, kParts);
  ASSERT_FALSE(share_b.empty());
  const uint32_t moving = *share_b.begin();
  Append("crawl1", moving, "payload-1");
  std::vector<InboxEntry> got = PollUntil(*a, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].partition, moving);
  EXPECT_EQ(got[0].payload, "payload-1");

  ClusterOptions options_b = options_a;
  options_b.node_id = "b";
  auto b = MustJoin(options_b);
  ASSERT_NE(b, nullptr);
  std::set<uint32_t> others = share_b;
  others.erase(moving);
  // b gets the rest of its share; `moving` stays with a while its entry is outstanding.
  ASSERT_TRUE(WaitFor([&] {
    std::set<uint32_t> vb = Valid(*b);
    EXPECT_FALSE(vb.count(moving)) << "taken while an entry was outstanding";
    return vb == others;
  }));
  EXPECT_TRUE(a->MayFetch(moving));
  EXPECT_EQ(ClusterLeaseOwner(Lease("crawl1", moving)), "a");

  if (ack) {
    ASSERT_TRUE(a->Ack(got).ok());
  } else {
    a->Forget(got);
  }
  // The first value after a's is the cool-down, then b's.
  std::string after;
  ASSERT_TRUE(WaitFor([&] {
    std::string value = Lease("crawl1", moving);
    if (ClusterLeaseOwner(value) == "a") return false;
    after = value;
    return true;
  }));
  EXPECT_EQ(after, kClusterLeaseReleased);
  ASSERT_TRUE(WaitFor([&] { return b->MayFetch(moving); }));
  EXPECT_FALSE(a->MayFetch(moving));
  if (!ack) {
    // Forgotten, not acknowledged: the new owner claims it.
    std::vector<InboxEntry> again = PollUntil(*b, 1);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].id, got[0].id);
    EXPECT_EQ(again[0].payload, "payload-1");
    ASSERT_TRUE(b->Ack(again).ok());
  }
  ASSERT_TRUE(a->MarkSeeded().ok());
  ASSERT_TRUE(WaitFor([&] { return FinishedNow(*b); }));
  auto polled = b->Poll(64);
  ASSERT_TRUE(polled.ok());
  EXPECT_TRUE(polled->empty());
}

INSTANTIATE_TEST_SUITE_P(AckOrForget, DrainTest, ::testing::Bool());

// docs/features/cluster.md, "Ownership": a Crawl-delay the owner learned (longer than the
// configured delay) travels with the partition as the released lease's cool-down.
TEST_F(ClusterCoordinatorTest, ALearnedCrawlDelayIsTheReleasedLeasesCoolDown) {
  constexpr uint32_t kParts = 4;
  ClusterOptions options = Options("a", kParts);
  options.lease_ttl = milliseconds(10000);
  options.handover_delay = milliseconds(3000);
  auto a = MustJoin(options);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Valid(*a).size() == kParts; }));
  a->SetLearnedDelays([] {
    return std::map<uint32_t, milliseconds>{{1, milliseconds(20000)}, {2, milliseconds(50)}};
  });
  ASSERT_TRUE(a->Leave(/*finished=*/false).ok());
  for (uint32_t p = 0; p < kParts; ++p) {
    // Values the release set, not elapsed time: a cool-down that has run out reads as gone
    // (PTTL -2), which is still not longer than the one it was given.
    const std::string value = Lease("crawl1", p);
    const long long ttl = Run({"PTTL", ClusterLeaseKey("crawl1", p)}).integer;
    if (p == 1) {
      EXPECT_EQ(value, kClusterLeaseReleased);
      EXPECT_GT(ttl, 3000) << "the learned 20 s, not the configured 3 s";
    } else {
      EXPECT_TRUE(value == kClusterLeaseReleased || value.empty()) << p << ": " << value;
      EXPECT_LE(ttl, 3000) << p << ": the configured delay (50 ms is shorter)";
    }
  }
}

// `urlsieve cluster delete` (cluster_delete.h): refused while a node is alive, naming it; once it
// left, every key of the cluster is gone.
TEST_F(ClusterCoordinatorTest, DeleteIsRefusedWhileANodeLivesThenDeletesEverything) {
  auto a = MustJoin(Options("a", 4));
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Valid(*a).size() == 4; }));
  Append("crawl1", 2, "payload");
  Result<uint64_t> refused = DeleteCluster(server_->address(), "crawl1");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("live nodes (a)"), std::string::npos)
      << refused.status().ToString();
  EXPECT_GT(Run({"DBSIZE"}).integer, 0);
  ASSERT_TRUE(a->Leave(/*finished=*/false).ok());
  Result<uint64_t> deleted = DeleteCluster(server_->address(), "crawl1");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_GT(*deleted, 0u);
  EXPECT_EQ(Run({"DBSIZE"}).integer, 0) << "the function library aside, nothing is left";
  Result<uint64_t> none = DeleteCluster(server_->address(), "crawl1");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound) << none.status().ToString();
}

TEST_F(ClusterCoordinatorTest, ADeadNodesUnacknowledgedEntriesComeBack) {
  constexpr uint32_t kParts = 4;
  auto a = MustJoin(Options("a", kParts));
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Valid(*a).size() == kParts; }));
  std::set<std::string> payloads;
  for (int i = 0; i < 6; ++i) {
    std::string payload = Numbered("url-", i);
    Append("crawl1", static_cast<uint32_t>(i) % kParts, payload);
    payloads.insert(payload);
  }
  std::vector<InboxEntry> got = PollUntil(*a, 6);
  ASSERT_EQ(got.size(), 6u);
  std::set<std::string> seen;
  for (const InboxEntry& entry : got) seen.insert(entry.payload);
  EXPECT_EQ(seen, payloads);
  // Two are recorded and acknowledged; the node dies with four in flight.
  std::vector<InboxEntry> acked(got.begin(), got.begin() + 2);
  ASSERT_TRUE(a->Ack(acked).ok());
  a.reset();  // no Leave: its heartbeat expires after the TTL
  // A lease has no TTL of its own: it is a's while a's heartbeat lives, and is taken over after.
  for (uint32_t p = 0; p < kParts; ++p) {
    EXPECT_EQ(Lease("crawl1", p).rfind("a@", 0), 0u) << Lease("crawl1", p);
    EXPECT_EQ(Run({"PTTL", ClusterLeaseKey("crawl1", p)}).integer, -1);
  }

  auto b = MustJoin(Options("b", kParts));
  ASSERT_NE(b, nullptr);
  std::vector<InboxEntry> back = PollUntil(*b, 4);
  for (uint32_t p = 0; p < kParts; ++p) {
    EXPECT_EQ(Lease("crawl1", p).rfind("b@", 0), 0u) << Lease("crawl1", p);
  }
  std::set<std::string> back_payloads;
  for (const InboxEntry& entry : back) back_payloads.insert(entry.payload);
  std::set<std::string> expected;
  for (size_t i = 2; i < got.size(); ++i) expected.insert(got[i].payload);
  EXPECT_EQ(back_payloads, expected);
  EXPECT_EQ(back.size(), 4u);
  ASSERT_TRUE(b->Ack(back).ok());
  ASSERT_TRUE(b->MarkSeeded().ok());
  ASSERT_TRUE(WaitFor([&] { return FinishedNow(*b); }));
  // Acknowledged entries never come back.
  auto polled = b->Poll(64);
  ASSERT_TRUE(polled.ok());
  EXPECT_TRUE(polled->empty());
}

// A failover, or Redis stalled for longer than the lease TTL: every node's expiry passes, and
// the first node to beat again must not take the others' partitions, whose recorded entries (not
// yet acknowledged: that waits for the checkpoint) it would claim and fetch again.
TEST_F(ClusterCoordinatorTest, AnOutageLongerThanTheLeaseTtlMovesNoPartition) {
  RedisServer::Options aof;
  aof.append_only = true;
  StartServer(aof);
  constexpr uint32_t kParts = 8;
  const std::vector<std::string> ids = {"a", "b", "c"};
  std::vector<std::unique_ptr<ClusterCoordinator>> nodes;
  std::vector<std::set<uint32_t>> shares;
  for (size_t i = 0; i < ids.size(); ++i) {
    nodes.push_back(MustJoin(Options(ids[i], kParts)));
    ASSERT_NE(nodes.back(), nullptr);
    shares.push_back(Share(ids, i, kParts));
    ASSERT_FALSE(shares.back().empty());
  }
  auto each_holds_its_share = [&] {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (Valid(*nodes[i]) != shares[i]) return false;
    }
    return true;
  };
  ASSERT_TRUE(WaitFor(each_holds_its_share));
  // Each node has recorded a page of each of its partitions.
  std::vector<std::vector<InboxEntry>> recorded;
  for (size_t i = 0; i < ids.size(); ++i) {
    for (uint32_t p : shares[i]) Append("crawl1", p, Numbered("recorded by " + ids[i] + " in ", p));
    recorded.push_back(PollUntil(*nodes[i], shares[i].size()));
    ASSERT_EQ(recorded.back().size(), shares[i].size());
    nodes[i]->Recorded(recorded.back());
  }

  // Redis goes away for 3 lease TTLs (the outage itself, not a synchronisation) and comes back
  // with its data, as a promoted replica does.
  server_->Kill();
  std::this_thread::sleep_for(milliseconds(3000));
  ASSERT_TRUE(server_->Restart());
  auto client = RedisClient::Connect(server_->address());
  ASSERT_TRUE(client.ok());
  raw_ = std::move(client).value();

  // Each node takes its own partitions again, under a new tenure, and claims nothing.
  std::vector<std::string> claimed;
  ASSERT_TRUE(WaitFor([&] {
    for (size_t i = 0; i < ids.size(); ++i) {
      auto polled = nodes[i]->Poll(64);
      if (!polled.ok() || polled->empty()) continue;
      for (const InboxEntry& entry : *polled)
        claimed.push_back(ids[i] + " claimed " + entry.payload);
      nodes[i]->Forget(*polled);
    }
    return each_holds_its_share();
  }));
  EXPECT_TRUE(claimed.empty()) << claimed[0];
  for (size_t i = 0; i < ids.size(); ++i) {
    for (uint32_t p : shares[i]) EXPECT_EQ(Lease("crawl1", p).rfind(ids[i] + "@", 0), 0u);
    ASSERT_TRUE(WaitFor([&] { return nodes[i]->Ack(recorded[i]).ok(); }));
    EXPECT_TRUE(nodes[i]->error().ok()) << nodes[i]->error().ToString();
  }
}

// The grace of an outage is one lease TTL: a node that died meanwhile is taken over after it,
// and its unacknowledged entries come back.
TEST_F(ClusterCoordinatorTest, ANodeThatDiedDuringAnOutageIsTakenOverAfterIt) {
  RedisServer::Options aof;
  aof.append_only = true;
  StartServer(aof);
  constexpr uint32_t kParts = 8;
  auto a = MustJoin(Options("a", kParts));
  auto b = MustJoin(Options("b", kParts));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const std::set<uint32_t> share_b = Share({"a", "b"}, 1, kParts);
  ASSERT_FALSE(share_b.empty());
  ASSERT_TRUE(WaitFor([&] { return Valid(*b) == share_b; }));
  Append("crawl1", *share_b.begin(), "recorded by b");
  std::vector<InboxEntry> recorded = PollUntil(*b, 1);
  ASSERT_EQ(recorded.size(), 1u);
  b->Recorded(recorded);

  server_->Kill();
  b.reset();  // dies while Redis is away: no Leave, no acknowledgement
  std::this_thread::sleep_for(milliseconds(3000));  // the outage itself
  ASSERT_TRUE(server_->Restart());

  std::vector<InboxEntry> back;
  ASSERT_TRUE(WaitFor([&] {
    auto polled = a->Poll(64);
    if (polled.ok()) back.insert(back.end(), polled->begin(), polled->end());
    return Valid(*a).size() == kParts && !back.empty();
  }));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].payload, "recorded by b");
  ASSERT_TRUE(WaitFor([&] { return a->Ack(back).ok(); }));
  EXPECT_TRUE(a->error().ok()) << a->error().ToString();
}

TEST_F(ClusterCoordinatorTest, PollAckForgetAndBounds) {
  constexpr uint32_t kParts = 4;
  ClusterOptions options = Options("a", kParts);
  options.max_outstanding_per_partition = 5;
  auto a = MustJoin(options);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Valid(*a).size() == kParts; }));
  // A partition whose stream does not exist yet reads nothing; one without the group too.
  auto none = a->Poll(64);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
  Run({"XADD", ClusterInboxKey("crawl1", 3), "*", "c", "no-group"});
  appended_.push_back(3);

  std::map<std::string, uint32_t> where;
  for (int i = 0; i < 12; ++i) {
    std::string payload = Numbered("p", i);
    Append("crawl1", 1, payload);
    where[payload] = 1;
  }
  where["no-group"] = 3;
  // At most 5 outstanding from partition 1.
  std::vector<InboxEntry> got = PollUntil(*a, 6);
  ASSERT_EQ(got.size(), 6u);
  size_t from_1 = 0;
  for (const InboxEntry& entry : got) {
    EXPECT_EQ(entry.partition, where[entry.payload]) << entry.payload;
    from_1 += entry.partition == 1 ? 1 : 0;
  }
  EXPECT_EQ(from_1, 5u);
  auto more = a->Poll(64);
  ASSERT_TRUE(more.ok());
  EXPECT_TRUE(more->empty());

  // Ack two, forget one: three new ones and the forgotten one come.
  std::vector<InboxEntry> from_partition_1;
  for (const InboxEntry& entry : got) {
    if (entry.partition == 1) from_partition_1.push_back(entry);
  }
  ASSERT_TRUE(a->Ack(std::span(from_partition_1).subspan(0, 2)).ok());
  a->Forget(std::span(from_partition_1).subspan(2, 1));
  std::vector<InboxEntry> next = PollUntil(*a, 3);
  ASSERT_EQ(next.size(), 3u);
  bool forgotten_back = false;
  for (const InboxEntry& entry : next) {
    forgotten_back = forgotten_back || entry.id == from_partition_1[2].id;
    EXPECT_NE(entry.id, from_partition_1[0].id);
    EXPECT_NE(entry.id, from_partition_1[1].id);
  }
  EXPECT_TRUE(forgotten_back);
  // Acknowledged entries are deleted: the inbox holds what is pending only.
  EXPECT_EQ(Run({"XLEN", ClusterInboxKey("crawl1", 1)}).integer, 10);
  EXPECT_TRUE(a->error().ok());
}

TEST_F(ClusterCoordinatorTest, NudgedAndBusyPartitionsAreReadAtTheNextPoll) {
  // Many idle partitions: a Poll probes them (XLEN) and backs them off; a partition this node
  // appended to (Nudge) or whose last read brought entries is read at the very next Poll.
  constexpr uint32_t kParts = 256;
  auto a = MustJoin(Options("a", kParts));
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Valid(*a).size() == kParts; }));
  for (int i = 0; i < 3; ++i) {
    auto none = a->Poll(64);
    ASSERT_TRUE(none.ok()) << none.status().ToString();
    EXPECT_TRUE(none->empty());
  }
  const std::string first = Append("crawl1", 200, "first");
  Append("crawl1", 200, "second");
  const uint32_t nudged[] = {200};
  a->Nudge(nudged);
  auto got = a->Poll(1);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].partition, 200u);
  EXPECT_EQ((*got)[0].id, first);
  auto next = a->Poll(1);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_EQ(next->size(), 1u);
  EXPECT_EQ((*next)[0].payload, "second");
  // Not nudged: another node's appends become known from the lists it publishes. Its first list
  // seen here is its first (number 1): the partition it names is read.
  Append("crawl1", 17, "listed");
  appended_.clear();
  AnotherNodeAppended("crawl1", 17);
  std::vector<InboxEntry> listed = PollUntil(*a, 1);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].partition, 17u);
  // A list skipped (its number jumps by two): every held inbox is probed once (a sweep), and the
  // entry is found by its probe, then read.
  Append("crawl1", 99, "swept");
  appended_.clear();
  Run({"HINCRBY", ClusterNodeKey("crawl1", "writer"), "appended", "1"});
  AnotherNodeAppended("crawl1", 3);
  std::vector<InboxEntry> probed = PollUntil(*a, 1);
  ASSERT_EQ(probed.size(), 1u);
  EXPECT_EQ(probed[0].partition, 99u);
  EXPECT_TRUE(a->error().ok());
}

TEST_F(ClusterCoordinatorTest, FinishedOnlyWhenSeededAndEverythingAcknowledged) {
  constexpr uint32_t kParts = 4;
  auto a = MustJoin(Options("a", kParts));
  ASSERT_NE(a, nullptr);
  auto finished = a->Finished();
  ASSERT_TRUE(finished.ok()) << finished.status().ToString();
  EXPECT_FALSE(*finished);  // not seeded
  Append("crawl1", 2, "seed");
  ASSERT_TRUE(a->MarkSeeded().ok());
  EXPECT_FALSE(FinishedNow(*a));  // pending
  std::vector<InboxEntry> got = PollUntil(*a, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(FinishedNow(*a));  // in flight
  Append("crawl1", 3, "link");    // the page's links, before its Ack
  ASSERT_TRUE(a->Ack(got).ok());
  EXPECT_FALSE(FinishedNow(*a));
  std::vector<InboxEntry> link = PollUntil(*a, 1);
  ASSERT_EQ(link.size(), 1u);
  EXPECT_EQ(link[0].payload, "link");
  ASSERT_TRUE(a->Ack(link).ok());
  // Once a heartbeat has seen the cluster quiet.
  EXPECT_TRUE(WaitFor([&] { return FinishedNow(*a); }));
}

TEST_F(ClusterCoordinatorTest, GoesOnAfterARedisRestartWithAof) {
  RedisServer::Options aof;
  aof.append_only = true;
  StartServer(aof);
  constexpr uint32_t kParts = 4;
  auto a = MustJoin(Options("a", kParts));
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Valid(*a).size() == kParts; }));
  Append("crawl1", 0, "before");
  std::vector<InboxEntry> before = PollUntil(*a, 1);
  ASSERT_EQ(before.size(), 1u);
  ASSERT_TRUE(server_->Restart());
  auto client = RedisClient::Connect(server_->address());
  ASSERT_TRUE(client.ok());
  raw_ = std::move(client).value();
  Append("crawl1", 1, "after");
  std::vector<InboxEntry> after = PollUntil(*a, 1);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].payload, "after");
  EXPECT_TRUE(a->error().ok()) << a->error().ToString();
  // Acknowledging works across the restart (retried by the caller while Redis is away).
  ASSERT_TRUE(WaitFor([&] { return a->Ack(before).ok(); }));
  ASSERT_TRUE(a->Ack(after).ok());
  ASSERT_TRUE(a->MarkSeeded().ok());
  EXPECT_TRUE(WaitFor([&] { return FinishedNow(*a); }));
  EXPECT_TRUE(a->error().ok()) << a->error().ToString();
}

TEST_F(ClusterCoordinatorTest, ARestartWithoutPersistenceIsLostCoordinationState) {
  constexpr uint32_t kParts = 4;
  auto a = MustJoin(Options("a", kParts));
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Valid(*a).size() == kParts; }));
  ASSERT_TRUE(server_->Restart());  // --save "" and no AOF: everything is gone
  ASSERT_TRUE(WaitFor([&] { return !a->error().ok(); }));
  const std::string message = a->error().message();
  EXPECT_NE(message.find("coordination state lost"), std::string::npos) << message;
  EXPECT_NE(message.find("crawl1"), std::string::npos) << message;
  EXPECT_NE(message.find(server_->url()), std::string::npos) << message;
  EXPECT_TRUE(Valid(*a).empty());
  auto polled = a->Poll(10);
  ASSERT_FALSE(polled.ok());
  EXPECT_NE(polled.status().message().find("coordination state lost"), std::string::npos);
  EXPECT_FALSE(a->Finished().ok());
}

TEST_F(ClusterCoordinatorTest, ALostLeaseDropsItsEntriesAndANewTenureHandsThemOutAgain) {
  auto a = MustJoin(Options("a", 1));
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return a->MayFetch(0u); }));
  Append("crawl1", 0, "page");
  std::vector<InboxEntry> first = PollUntil(*a, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(a->MayFetch(first[0]));
  // a's heartbeat expires (as after a long pause) and another holder takes its lease: a's next
  // heartbeat ends its tenure, so a loses the partition, and takes it back once that lease is
  // gone.
  Run({"ZADD", ClusterNodesKey("crawl1"), "1", "a"});
  Run({"SET", ClusterLeaseKey("crawl1", 0), "intruder@x#1", "PX", "300"});
  ASSERT_TRUE(WaitFor([&] { return !a->MayFetch(0u); }));
  EXPECT_FALSE(a->MayFetch(first[0]));
  std::vector<InboxEntry> again = PollUntil(*a, 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].id, first[0].id);
  EXPECT_NE(again[0].tenure, first[0].tenure);
  EXPECT_FALSE(a->MayFetch(first[0]));
  EXPECT_TRUE(a->MayFetch(again[0]));
  a->Forget(first);  // the old copy: does not touch the new one
  EXPECT_TRUE(a->MayFetch(again[0]));
  ASSERT_TRUE(a->Ack(again).ok());
  ASSERT_TRUE(a->MarkSeeded().ok());
  EXPECT_TRUE(WaitFor([&] { return FinishedNow(*a); }));
}

// FUNCTION FLUSH (or a server that lost only its functions): the library is loaded again and the
// node goes on; the data is there, so this is no lost state.
TEST_F(ClusterCoordinatorTest, ReloadsItsFunctionsWhenTheyAreGone) {
  auto a = MustJoin(Options("a", 2));
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Valid(*a).size() == 2; }));
  Run({"FUNCTION", "FLUSH"});
  for (int i = 0; i < 5; ++i) Append("crawl1", 1, Numbered("u", i));
  // Poll(max) never returns more than max.
  std::vector<InboxEntry> got;
  ASSERT_TRUE(WaitFor([&] {
    auto entries = a->Poll(2);
    EXPECT_TRUE(entries.ok()) << entries.status().ToString();
    if (!entries.ok()) return false;
    EXPECT_LE(entries->size(), 2u);
    got.insert(got.end(), entries->begin(), entries->end());
    return got.size() == 5;
  }));
  Run({"FUNCTION", "FLUSH"});
  ASSERT_TRUE(a->Ack(got).ok());
  ASSERT_TRUE(a->MarkSeeded().ok());
  EXPECT_TRUE(WaitFor([&] { return FinishedNow(*a); }));
  EXPECT_TRUE(a->error().ok()) << a->error().ToString();
  EXPECT_EQ(Valid(*a).size(), 2u);
}

TEST_F(ClusterCoordinatorTest, ReadClusterStatus) {
  auto missing = ReadClusterStatus(server_->address(), "crawl1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("crawl1"), std::string::npos);

  constexpr uint32_t kParts = 16;
  auto a = MustJoin(Options("a", kParts));
  auto b = MustJoin(Options("b", kParts));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(WaitFor([&] {
    return Valid(*a) == Share({"a", "b"}, 0, kParts) && Valid(*b) == Share({"a", "b"}, 1, kParts);
  }));
  a->Publish({10, 1, 30});
  b->Publish({5, 0, 7});
  Append("crawl1", 0, "x");
  Append("crawl1", 5, "y");
  ClusterCoordinator* owner = a->MayFetch(0) ? a.get() : b.get();
  std::vector<InboxEntry> got = PollUntil(*owner, 1);
  ASSERT_GE(got.size(), 1u);
  ASSERT_TRUE(WaitFor([&] {
    auto status = ReadClusterStatus(server_->address(), "crawl1");
    return status.ok() && status->pages == 15;
  }));
  auto status = ReadClusterStatus(server_->address(), "crawl1");
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(status->name, "crawl1");
  EXPECT_EQ(status->server, server_->url());
  EXPECT_EQ(status->partitions, kParts);
  EXPECT_FALSE(status->seeded);
  ASSERT_EQ(status->nodes.size(), 2u);
  EXPECT_EQ(status->nodes[0].partitions + status->nodes[1].partitions, kParts);
  EXPECT_EQ(status->unowned_partitions, 0u);
  EXPECT_EQ(status->pending, 2u);
  EXPECT_GE(status->in_flight, 1u);
  EXPECT_EQ(status->errors, 1u);
  for (const ClusterNodeStatus& node : status->nodes) {
    EXPECT_TRUE(node.alive) << node.id;
    EXPECT_EQ(node.state, "running");
    EXPECT_EQ(node.pid, static_cast<int64_t>(::getpid()));
  }
  nlohmann::json json = nlohmann::json::parse(status->ToJson());
  EXPECT_EQ(json["name"], "crawl1");
  EXPECT_EQ(json["partitions"], kParts);
  EXPECT_EQ(json["pending"], 2);
  EXPECT_EQ(json["pages"], 15);
  ASSERT_EQ(json["nodes"].size(), 2u);
  for (const char* key : {"id", "host", "pid", "state", "alive", "heartbeat_age_ms", "partitions",
                          "pages", "errors"}) {
    EXPECT_TRUE(json["nodes"][0].contains(key)) << key;
  }
  EXPECT_NE(status->ToText().find("crawl1"), std::string::npos);

  // The node's own view, as of its last heartbeat.
  ASSERT_TRUE(WaitFor([&] { return a->Totals().pages == 15 && a->Totals().pending == 2; }));
  const ClusterStatus totals = a->Totals();
  EXPECT_EQ(totals.name, "crawl1");
  EXPECT_EQ(totals.nodes.size(), 2u);
  EXPECT_GE(totals.in_flight, 1u);
  for (const ClusterNodeStatus& node : totals.nodes) {
    EXPECT_TRUE(node.alive);
    if (node.id == "a") {
      EXPECT_EQ(node.partitions, Valid(*a).size());
    }
  }

  ASSERT_TRUE(owner->Ack(got).ok());
  ASSERT_TRUE(a->Leave(true).ok());
  status = ReadClusterStatus(server_->address(), "crawl1");
  ASSERT_TRUE(status.ok());
  for (const ClusterNodeStatus& node : status->nodes) {
    if (node.id != "a") continue;
    EXPECT_FALSE(node.alive);
    EXPECT_EQ(node.state, "finished");
    EXPECT_EQ(node.partitions, 0u);
  }
}

}  // namespace
}  // namespace urlsieve
