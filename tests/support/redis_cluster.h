// RedisCluster: a real Redis Cluster for tests, N masters (and R replicas of each, none by
// default), each a Debian redis-server (RedisServer, cluster-enabled) on 127.0.0.1 at a free port
// whose bus port (port + 10000) is free too, assembled by `redis-cli --cluster create`. Start()
// returns once every node says cluster_state:ok, all agree on the slot map and every replica's
// link to its master is up. The destructor kills the nodes (they also die with the test process,
// see redis_server.h).
//
// Failover: a cluster with replicas has a short cluster-node-timeout (kFailoverNodeTimeoutMs), so
// that KillMasterAndFailOver() — SIGKILL to a master, then polling until one of its replicas is
// master and the survivors serve every slot again — takes a few seconds, not the default 15 s.
//
// Starting one takes a second or two: a test binary shares one between the tests that leave it as
// they found it, and gives one of its own to a test that kills or reshards nodes.
//
// Thread-safety: a test fixture; one thread.
#ifndef URLSIEVE_TESTS_SUPPORT_REDIS_CLUSTER_H_
#define URLSIEVE_TESTS_SUPPORT_REDIS_CLUSTER_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "redis/redis_address.h"
#include "redis/redis_connection.h"
#include "tests/support/child_process.h"
#include "tests/support/redis_server.h"

namespace urlsieve::testing {

class RedisCluster {
 public:
  // cluster-node-timeout of a cluster with replicas: a dead master is marked failed after about
  // this long, and its replica elected within about as much again.
  static constexpr int kFailoverNodeTimeoutMs = 1000;

  // Starts `masters` × (1 + `replicas_per_master`) nodes in `dir`/node-<i> and makes them a
  // cluster; `password`, if any, is every node's requirepass (and masterauth). Null, with a test
  // failure saying why (the redis-cli output included), when it cannot.
  static std::unique_ptr<RedisCluster> Start(const std::filesystem::path& dir, int masters = 3,
                                             const std::string& password = "",
                                             int replicas_per_master = 0) {
    std::unique_ptr<RedisCluster> cluster(new RedisCluster(dir, password));
    RedisServer::Options options;
    options.cluster = true;
    options.password = password;
    if (replicas_per_master > 0) {
      options.extra_args = {"--cluster-node-timeout", std::to_string(kFailoverNodeTimeoutMs),
                            // a replica's first sync at once, not after the default 5 s
                            "--repl-diskless-sync-delay", "0"};
      if (!password.empty())
        options.extra_args.insert(options.extra_args.end(), {"--masterauth", password});
    }
    for (int i = 0; i < masters * (1 + replicas_per_master); ++i) {
      std::string name = "node-";
      name += std::to_string(i);
      auto node = RedisServer::Start(dir / name, options);
      if (node == nullptr) return nullptr;
      cluster->nodes_.push_back(std::move(node));
    }
    std::vector<std::string> args = {"redis-cli", "--cluster", "create"};
    for (const auto& node : cluster->nodes_) {
      std::string endpoint = "127.0.0.1:";
      endpoint += std::to_string(node->port());
      args.push_back(std::move(endpoint));
    }
    args.insert(args.end(),
                {"--cluster-replicas", std::to_string(replicas_per_master), "--cluster-yes"});
    if (!password.empty()) args.insert(args.end(), {"-a", password, "--no-auth-warning"});
    const std::filesystem::path log = dir / "cluster-create.log";
    if (!RunTool(args, log, std::chrono::seconds(60))) {
      ADD_FAILURE() << "redis-cli --cluster create failed: " << ReadFile(log);
      return nullptr;
    }
    if (!cluster->WaitUntilConsistent()) {
      ADD_FAILURE() << "the cluster in " << dir << " did not become ok: " << ReadFile(log);
      return nullptr;
    }
    if (replicas_per_master > 0 && !cluster->WaitForReplicas(masters, replicas_per_master)) {
      ADD_FAILURE() << "the replicas in " << dir
                    << " did not sync with their masters: " << ReadFile(log);
      return nullptr;
    }
    return cluster;
  }

  int size() const { return static_cast<int>(nodes_.size()); }
  RedisServer& node(int i) { return *nodes_[i]; }
  std::string url() const { return nodes_[0]->url(); }
  // Node 0's address, with the password: where a client starts.
  RedisAddress address() const { return NodeAddress(0); }
  RedisAddress NodeAddress(int i) const {
    RedisAddress address = nodes_[i]->address();
    address.password = password_;
    return address;
  }

  // A connection of the test's own to node i (no cluster routing).
  std::unique_ptr<RedisConnection> Connect(int i) const {
    auto connection = RedisConnection::Open(NodeAddress(i), {1.0, 10.0});
    if (!connection.ok()) {
      ADD_FAILURE() << connection.status().ToString();
      return nullptr;
    }
    return std::move(connection).value();
  }

  // Runs `argv` on node i; an error reply or a fault is a test failure (and a nil reply).
  RedisReply Run(int i, std::vector<std::string> argv) const {
    auto connection = Connect(i);
    if (connection == nullptr) return {};
    auto reply = connection->Run({std::move(argv), -1});
    if (!reply.ok()) {
      ADD_FAILURE() << reply.status().ToString();
      return {};
    }
    EXPECT_FALSE(reply->is_error()) << nodes_[i]->url() << ": " << reply->str;
    return std::move(reply).value();
  }

  std::string NodeId(int i) const { return Run(i, {"CLUSTER", "MYID"}).str; }

  bool alive(int i) const { return nodes_[i]->pid() > 0; }
  // Whether node i (alive) says it is a master (ROLE).
  bool IsMaster(int i) const {
    const RedisReply role = Run(i, {"ROLE"});
    return !role.elements.empty() && role.elements[0].str == "master";
  }
  // The live nodes that are masters serving slots (by the map of a live node), in index order.
  std::vector<int> Masters() const {
    std::vector<int> masters;
    int asked = 0;
    while (asked < size() && !alive(asked)) ++asked;
    for (const auto& [first, last, port] : SlotMap(asked)) {
      for (int i = 0; i < size(); ++i) {
        if (nodes_[i]->port() == port &&
            std::find(masters.begin(), masters.end(), i) == masters.end()) {
          masters.push_back(i);
        }
      }
    }
    std::sort(masters.begin(), masters.end());
    return masters;
  }

  // The failover of a master: SIGKILL to node `master`, then polling (deadline `timeout`) until
  // one of its replicas says it is master and every live node says cluster_state:ok with all
  // slots served and the same slot map. Returns the promoted node's index, or -1 with a test
  // failure. *took, if given: from the kill to the cluster being whole again.
  int KillMasterAndFailOver(int master, std::chrono::seconds timeout = std::chrono::seconds(30),
                            std::chrono::milliseconds* took = nullptr) {
    std::vector<int> replicas;
    const std::string id = NodeId(master);
    for (int i = 0; i < size(); ++i) {
      if (i == master || !alive(i)) continue;
      const RedisReply role = Run(i, {"ROLE"});
      // ROLE of a replica: slave, master host, master port, state, offset.
      if (role.elements.size() >= 3 && role.elements[0].str == "slave" &&
          role.elements[2].integer == nodes_[master]->port()) {
        replicas.push_back(i);
      }
    }
    if (replicas.empty()) {
      ADD_FAILURE() << "node " << master << " (" << id << ") has no replica to fail over to";
      return -1;
    }
    const auto start = std::chrono::steady_clock::now();
    nodes_[master]->Kill(SIGKILL);
    std::vector<int> skip;
    for (int i = 0; i < size(); ++i) {
      if (!alive(i)) skip.push_back(i);
    }
    const auto deadline = start + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      for (int replica : replicas) {
        if (!IsMasterQuietly(replica) || !Consistent(skip)) continue;
        if (took != nullptr) {
          *took = std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::steady_clock::now() - start);
        }
        return replica;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling the election
    }
    ADD_FAILURE() << "no replica of node " << master << " was promoted within " << timeout.count()
                  << " s";
    return -1;
  }

  // The node (index) that node `asked` says serves `slot`; -1 when none.
  int OwnerOf(int slot, int asked = 0) const {
    for (const auto& [first, last, port] : SlotMap(asked)) {
      if (slot < first || slot > last) continue;
      for (int i = 0; i < size(); ++i) {
        if (nodes_[i]->port() == port) return i;
      }
    }
    return -1;
  }

  // Polls (deadline `timeout`) until every node not in `skip` says cluster_state:ok with all 16384
  // slots served, and all give the same slot map.
  bool WaitUntilConsistent(std::chrono::seconds timeout = std::chrono::seconds(30),
                           const std::vector<int>& skip = {}) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (Consistent(skip)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling the gossip
    }
    return false;
  }

 private:
  using SlotRanges = std::vector<std::tuple<int, int, int>>;  // first, last, master's port

  RedisCluster(std::filesystem::path dir, std::string password)
      : dir_(std::move(dir)), password_(std::move(password)) {}

  // ROLE says master; false (no test failure) when the node does not answer.
  bool IsMasterQuietly(int i) const {
    auto connection = RedisConnection::Open(NodeAddress(i), {1.0, 5.0});
    if (!connection.ok()) return false;
    auto role = (*connection)->Run({{"ROLE"}, -1});
    return role.ok() && !role->elements.empty() && role->elements[0].str == "master";
  }

  // Polls (deadline 30 s) until each of the `masters` masters says its `replicas` replicas are
  // online (INFO replication: state=online, their first sync done) and each replica says its link
  // is up, so that a failover finds a replica that holds the data.
  bool WaitForReplicas(int masters, int replicas) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    const std::string connected = "connected_slaves:" + std::to_string(replicas) + "\r\n";
    while (std::chrono::steady_clock::now() < deadline) {
      int synced_masters = 0;
      int linked_replicas = 0;
      for (int i = 0; i < size(); ++i) {
        auto connection = RedisConnection::Open(NodeAddress(i), {1.0, 5.0});
        if (!connection.ok()) continue;
        auto info = (*connection)->Run({{"INFO", "replication"}, -1});
        if (!info.ok()) continue;
        const std::string& text = info->str;
        if (text.find("master_link_status:up") != std::string::npos) ++linked_replicas;
        int online = 0;
        for (size_t at = text.find("state=online"); at != std::string::npos;
             at = text.find("state=online", at + 1)) {
          ++online;
        }
        if (text.find("role:master") != std::string::npos &&
            text.find(connected) != std::string::npos && online == replicas) {
          ++synced_masters;
        }
      }
      if (synced_masters >= masters && linked_replicas >= masters * replicas) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling the first syncs
    }
    return false;
  }

  bool Consistent(const std::vector<int>& skip) const {
    std::vector<SlotRanges> maps;
    for (int i = 0; i < size(); ++i) {
      if (std::find(skip.begin(), skip.end(), i) != skip.end()) continue;
      auto connection = RedisConnection::Open(NodeAddress(i), {1.0, 5.0});
      if (!connection.ok()) return false;
      auto info = (*connection)->Run({{"CLUSTER", "INFO"}, -1});
      if (!info.ok() || info->str.find("cluster_state:ok") == std::string::npos ||
          info->str.find("cluster_slots_ok:16384") == std::string::npos) {
        return false;
      }
      auto slots = (*connection)->Run({{"CLUSTER", "SLOTS"}, -1});
      if (!slots.ok() || slots->type != RedisReply::Type::kArray) return false;
      maps.push_back(Parse(*slots));
    }
    for (const SlotRanges& map : maps) {
      if (map != maps.front()) return false;
    }
    return true;
  }

  SlotRanges SlotMap(int asked) const {
    auto connection = Connect(asked);
    if (connection == nullptr) return {};
    auto slots = connection->Run({{"CLUSTER", "SLOTS"}, -1});
    if (!slots.ok()) return {};
    return Parse(*slots);
  }

  static SlotRanges Parse(const RedisReply& slots) {
    SlotRanges ranges;
    for (const RedisReply& entry : slots.elements) {
      if (entry.elements.size() < 3 || entry.elements[2].elements.size() < 2) continue;
      ranges.emplace_back(entry.elements[0].integer, entry.elements[1].integer,
                          entry.elements[2].elements[1].integer);
    }
    std::sort(ranges.begin(), ranges.end());
    return ranges;
  }

  // Runs a tool, its output to `log`; false if it fails or outlives `timeout` (then it is killed).
  static bool RunTool(std::vector<std::string> args, const std::filesystem::path& log,
                      std::chrono::seconds timeout) {
    std::filesystem::remove(log);
    ChildProcess tool(std::move(args), ChildStreams{"/dev/null", log, log});
    return tool.Wait(timeout) == 0;
  }

  static std::string ReadFile(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::filesystem::path dir_;
  std::string password_;
  std::vector<std::unique_ptr<RedisServer>> nodes_;
};

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_SUPPORT_REDIS_CLUSTER_H_
