#include "redis/redis_cluster_client.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace urlsieve {
namespace {

constexpr int kSlotCount = 16384;
// A command redirected this many times in one call fails: a cluster whose nodes keep sending a
// command elsewhere is misconfigured or resharding faster than we follow; a loop it must not be.
constexpr int kMaxRedirections = 5;
// How long a master's replica count (ROLE) is trusted by WaitForReplicas before it is asked again.
constexpr std::chrono::seconds kReplicaCountAge{1};

constexpr std::array<uint16_t, 256> MakeCrc16Table() {
  std::array<uint16_t, 256> table{};
  for (int i = 0; i < 256; ++i) {
    uint16_t crc = static_cast<uint16_t>(i << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) != 0 ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                                : static_cast<uint16_t>(crc << 1);
    }
    table[i] = crc;
  }
  return table;
}

// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, no reflection, as the cluster spec.
uint16_t Crc16(std::string_view bytes) {
  static constexpr std::array<uint16_t, 256> kTable = MakeCrc16Table();
  uint16_t crc = 0;
  for (unsigned char byte : bytes) {
    crc = static_cast<uint16_t>((crc << 8) ^ kTable[((crc >> 8) ^ byte) & 0xff]);
  }
  return crc;
}

// A redirection: "MOVED <slot> <host>:<port>" or "ASK <slot> <host>:<port>". An empty host means
// the host of the node that answered (cluster-preferred-endpoint-type unknown-endpoint).
struct Redirection {
  bool ask = false;
  int slot = 0;
  std::string host;
  int port = 0;
};

bool ParseRedirection(std::string_view error, Redirection* out) {
  if (error.starts_with("MOVED ")) {
    out->ask = false;
    error.remove_prefix(6);
  } else if (error.starts_with("ASK ")) {
    out->ask = true;
    error.remove_prefix(4);
  } else {
    return false;
  }
  size_t space = error.find(' ');
  if (space == std::string_view::npos) return false;
  std::string_view slot = error.substr(0, space);
  std::string_view endpoint = error.substr(space + 1);
  size_t colon = endpoint.rfind(':');  // the last one: an IPv6 host has colons of its own
  if (colon == std::string_view::npos) return false;
  std::string_view port = endpoint.substr(colon + 1);
  auto [slot_end, slot_error] = std::from_chars(slot.data(), slot.data() + slot.size(), out->slot);
  auto [port_end, port_error] = std::from_chars(port.data(), port.data() + port.size(), out->port);
  if (slot_error != std::errc() || slot_end != slot.data() + slot.size() ||
      port_error != std::errc() || port_end != port.data() + port.size() || out->slot < 0 ||
      out->slot >= kSlotCount || out->port <= 0 || out->port > 65535) {
    return false;
  }
  out->host.assign(endpoint.substr(0, colon));
  return true;
}

// One range of CLUSTER SLOTS: slots [first, last] served by the master at host:port.
struct SlotRange {
  int first = 0;
  int last = 0;
  std::string host;
  int port = 0;
};

// Parses a CLUSTER SLOTS reply: an array of [first, last, [host, port, id, ...], replicas...].
// `answering_host` stands for an empty host ("the node you asked"); a "?" host (an endpoint the
// node does not know) leaves its slots unserved until a later refresh.
bool ParseClusterSlots(const RedisReply& reply, const std::string& answering_host,
                       std::vector<SlotRange>* ranges) {
  if (reply.type != RedisReply::Type::kArray) return false;
  for (const RedisReply& entry : reply.elements) {
    if (entry.type != RedisReply::Type::kArray || entry.elements.size() < 3) return false;
    const RedisReply& first = entry.elements[0];
    const RedisReply& last = entry.elements[1];
    const RedisReply& master = entry.elements[2];
    if (first.type != RedisReply::Type::kInteger || last.type != RedisReply::Type::kInteger ||
        first.integer < 0 || last.integer < first.integer || last.integer >= kSlotCount ||
        master.type != RedisReply::Type::kArray || master.elements.size() < 2 ||
        master.elements[0].type != RedisReply::Type::kString ||
        master.elements[1].type != RedisReply::Type::kInteger) {
      return false;
    }
    SlotRange range;
    range.first = static_cast<int>(first.integer);
    range.last = static_cast<int>(last.integer);
    range.host = master.elements[0].str;
    if (range.host == "?") continue;
    if (range.host.empty()) range.host = answering_host;
    if (master.elements[1].integer <= 0 || master.elements[1].integer > 65535) return false;
    range.port = static_cast<int>(master.elements[1].integer);
    ranges->push_back(std::move(range));
  }
  return true;
}

// A Redis Cluster: the slot map, the nodes it names (plus the seed) and a lazily opened
// connection to each.
class ClusterRedisClient final : public RedisClient {
 public:
  ClusterRedisClient(const RedisAddress& address, const RedisTimeouts& timeouts,
                     std::unique_ptr<RedisConnection> seed)
      : RedisClient(address), timeouts_(timeouts), slot_node_(kSlotCount, kNoNode) {
    Node& node = nodes_[NodeIndex(address.host, address.port)];
    node.connection = std::move(seed);
  }

  // Reads the slot map from the first node that gives one: those with an open connection first
  // (no connect), then the seed, then every other node ever named.
  Status RefreshSlotMap() {
    std::vector<size_t> order;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].connection != nullptr && !nodes_[i].connection->broken()) order.push_back(i);
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].connection == nullptr || nodes_[i].connection->broken()) order.push_back(i);
    }
    std::string failures;
    bool refused = false;  // a node answered but not with a slot map: not worth a retry
    for (size_t i : order) {
      Status s = ReadSlotMap(i);
      if (s.ok()) {
        map_stale_ = false;
        return s;
      }
      if (s.code() != StatusCode::kUnavailable) refused = true;
      failures += failures.empty() ? "" : "; ";
      failures += s.message();
    }
    std::string message = "Redis Cluster at ";
    message += server();
    message += ": no node gave the slot map (";
    message += failures;
    message += ")";
    return refused ? Status::FailedPrecondition(std::move(message))
                   : Status::Unavailable(std::move(message));
  }

  Status Pipeline(std::span<const RedisCommand> commands,
                  std::vector<RedisReply>* replies) override {
    replies->assign(commands.size(), RedisReply{});
    if (Status s = CheckRoutable(commands); !s.ok()) return s;
    if (map_stale_) {
      if (Status s = RefreshSlotMap(); !s.ok()) return s;
    }
    // ask_node[i]: the node an ASK sent commands[i] to, for its next attempt only.
    std::vector<size_t> ask_node(commands.size(), kNoNode);
    std::vector<size_t> pending(commands.size());
    for (size_t i = 0; i < commands.size(); ++i) pending[i] = i;
    std::string last_redirection;
    for (int round = 0;; ++round) {
      std::vector<std::vector<size_t>> groups(nodes_.size());
      if (Status s = GroupByNode(commands, pending, ask_node, &groups); !s.ok()) return s;
      std::vector<std::vector<RedisReply>> got;
      if (Status s = RunGroups(commands, groups, ask_node, round, &got); !s.ok()) return s;
      std::vector<size_t> redirected;
      std::vector<std::pair<int, size_t>> moved;  // (slot, node) from MOVED answers
      TakeReplies(groups, &got, &ask_node, replies, &redirected, &moved, &last_redirection);
      if (redirected.empty()) return Status::Ok();
      if (round + 1 >= kMaxRedirections) {
        return TooManyRedirections(commands[redirected[0]], last_redirection);
      }
      if (!moved.empty()) {
        // The slot map changed: read it again, then trust the nodes that answered MOVED for
        // their slots (the node read from may not know yet). A failed refresh leaves the old map
        // with those corrections.
        (void)RefreshSlotMap();
        for (auto [slot, node] : moved) SetSlotOwner(slot, node);
      }
      pending = std::move(redirected);
    }
  }

  Status OnEveryMaster(const RedisCommand& command, std::vector<RedisReply>* replies) override {
    replies->clear();
    if (map_stale_) {
      if (Status s = RefreshSlotMap(); !s.ok()) return s;
    }
    if (masters_.empty()) {
      map_stale_ = true;
      std::string message = "Redis Cluster at ";
      message += server();
      message += ": no master serves any slot; is the cluster still being created?";
      return Status::Unavailable(std::move(message));
    }
    const std::vector<size_t> masters = masters_;
    for (size_t node : masters) {
      std::vector<RedisReply> got;
      if (Status s = RunOn(node, std::span(&command, 1), &got); !s.ok()) return s;
      replies->push_back(std::move(got[0]));
    }
    return Status::Ok();
  }

  Status WaitForReplicas(std::span<const std::string> keys, int timeout_ms, int* lagging) override {
    if (lagging != nullptr) *lagging = 0;
    // The map as the writes were routed (not read again: a node that did not take this client's
    // writes would answer WAIT at once). A master that answered a write is in it.
    std::vector<size_t> masters;
    for (const std::string& key : keys) {
      const size_t node = slot_node_[RedisKeySlot(key)];
      if (node != kNoNode && std::find(masters.begin(), masters.end(), node) == masters.end()) {
        masters.push_back(node);
      }
    }
    if (Status s = CountReplicas(masters); !s.ok()) return s;
    std::vector<size_t> waited;
    std::vector<RedisCommand> waits;
    for (size_t node : masters) {
      if (nodes_[node].replicas <= 0) continue;
      waited.push_back(node);
      waits.push_back(
          {{"WAIT", std::to_string(nodes_[node].replicas), std::to_string(timeout_ms)}, -1});
    }
    std::vector<RedisReply> got;
    if (Status s = RunOnEach(waited, waits, &got); !s.ok()) return s;
    for (size_t i = 0; i < waited.size(); ++i) {
      if (got[i].is_error()) {
        return RedisErrorStatus(nodes_[waited[i]].address.ToString(), "WAIT", got[i]);
      }
      if (got[i].integer < nodes_[waited[i]].replicas) {
        nodes_[waited[i]].replicas = -1;  // a replica may have gone: count them again
        if (lagging != nullptr) ++*lagging;
      }
    }
    return Status::Ok();
  }

  bool is_cluster() const override { return true; }

 private:
  static constexpr size_t kNoNode = static_cast<size_t>(-1);

  struct Node {
    RedisAddress address;  // the client's credentials, this node's host and port
    std::unique_ptr<RedisConnection> connection;  // null until first used, or after a loss
    // A master's replicas in sync (ROLE lists those online), as of replicas_read; -1 unknown.
    int replicas = -1;
    std::chrono::steady_clock::time_point replicas_read;
  };

  size_t NodeIndex(const std::string& host, int port) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].address.host == host && nodes_[i].address.port == port) return i;
    }
    Node node;
    node.address = address();
    node.address.host = host;
    node.address.port = port;
    node.address.db = 0;  // a cluster has database 0 alone
    nodes_.push_back(std::move(node));
    return nodes_.size() - 1;
  }

  size_t NodeFor(const RedisCommand& command) const {
    if (command.key_index < 0) return masters_.empty() ? kNoNode : masters_[0];
    const size_t node = slot_node_[RedisKeySlot(command.argv[command.key_index])];
    return node;
  }

  void SetSlotOwner(int slot, size_t node) {
    slot_node_[slot] = node;
    bool known = false;
    for (size_t master : masters_) known = known || master == node;
    if (!known) masters_.push_back(node);
  }

  // Every command must name the key it is routed by (or none, key_index -1).
  Status CheckRoutable(std::span<const RedisCommand> commands) const {
    for (const RedisCommand& command : commands) {
      if (command.key_index >= static_cast<int>(command.argv.size()) || command.key_index < -1 ||
          command.argv.empty()) {
        std::string message = server();
        message += ": a command without the key it is routed by (key_index ";
        message += std::to_string(command.key_index);
        message += ")";
        return Status::InvalidArgument(std::move(message));
      }
    }
    return Status::Ok();
  }

  // groups[node]: the indices of the pending commands that go to `node` this round, in order.
  Status GroupByNode(std::span<const RedisCommand> commands, const std::vector<size_t>& pending,
                     const std::vector<size_t>& ask_node,
                     std::vector<std::vector<size_t>>* groups) {
    for (size_t i : pending) {
      size_t node = ask_node[i] != kNoNode ? ask_node[i] : NodeFor(commands[i]);
      if (node == kNoNode) {
        map_stale_ = true;
        std::string message = "Redis Cluster at ";
        message += server();
        if (commands[i].key_index < 0) {
          message += ": no master serves any slot";
        } else {
          message += ": no master serves slot ";
          message += std::to_string(RedisKeySlot(commands[i].argv[commands[i].key_index]));
        }
        message += " (running ";
        message += commands[i].argv[0];
        message += "); is the cluster down or still being created?";
        return Status::Unavailable(std::move(message));
      }
      (*groups)[node].push_back(i);
    }
    return Status::Ok();
  }

  // batches[node]: what `node` runs this round, each command an ASK sent there preceded by
  // ASKING; copies holds the batches that are not `commands` itself.
  static void BuildBatches(std::span<const RedisCommand> commands,
                           const std::vector<std::vector<size_t>>& groups,
                           const std::vector<size_t>& ask_node, int round,
                           std::vector<std::vector<RedisCommand>>* copies,
                           std::vector<std::span<const RedisCommand>>* batches) {
    size_t busy_nodes = 0;
    for (size_t node = 0; node < groups.size(); ++node) busy_nodes += !groups[node].empty();
    for (size_t node = 0; node < groups.size(); ++node) {
      if (groups[node].empty()) continue;
      if (busy_nodes == 1 && round == 0) {
        (*batches)[node] = commands;  // all to one node, in order: no copy
        continue;
      }
      std::vector<RedisCommand>& copy = (*copies)[node];
      copy.reserve(groups[node].size());
      for (size_t i : groups[node]) {
        if (ask_node[i] != kNoNode) copy.push_back({{"ASKING"}, -1});
        copy.push_back(commands[i]);
      }
      (*batches)[node] = copy;
    }
  }

  // Runs each node's group; got[node] are its replies (ASKING's included). Every node gets its
  // commands before any reply is read: a call waits for the slowest master, not for the sum of
  // them.
  Status RunGroups(std::span<const RedisCommand> commands,
                   const std::vector<std::vector<size_t>>& groups,
                   const std::vector<size_t>& ask_node, int round,
                   std::vector<std::vector<RedisReply>>* got) {
    std::vector<std::vector<RedisCommand>> copies(groups.size());
    std::vector<std::span<const RedisCommand>> batches(groups.size());
    BuildBatches(commands, groups, ask_node, round, &copies, &batches);
    Status failed = Status::Ok();
    std::vector<bool> sent(groups.size(), false);
    for (size_t node = 0; node < groups.size(); ++node) {
      if (groups[node].empty()) continue;
      Status s = SendTo(node, batches[node]);
      sent[node] = s.ok();
      if (!s.ok() && failed.ok()) failed = s;
    }
    got->assign(groups.size(), {});
    for (size_t node = 0; node < groups.size(); ++node) {
      if (!sent[node]) continue;  // every connection that was sent to is read, to stay in step
      Status s = ReceiveFrom(node, batches[node], &(*got)[node]);
      if (!s.ok() && failed.ok()) failed = s;
    }
    return failed;
  }

  // Moves each command's reply into (*replies)[i], unless it is a redirection: then the command
  // goes to `redirected`, an ASK's target to (*ask_node)[i] and a MOVED's slot and node to
  // `moved`.
  void TakeReplies(const std::vector<std::vector<size_t>>& groups,
                   std::vector<std::vector<RedisReply>>* got, std::vector<size_t>* ask_node,
                   std::vector<RedisReply>* replies, std::vector<size_t>* redirected,
                   std::vector<std::pair<int, size_t>>* moved, std::string* last_redirection) {
    for (size_t node = 0; node < groups.size(); ++node) {
      size_t next_reply = 0;
      for (size_t i : groups[node]) {
        if ((*ask_node)[i] != kNoNode) ++next_reply;  // ASKING's +OK
        RedisReply& reply = (*got)[node][next_reply++];
        (*ask_node)[i] = kNoNode;
        Redirection redirection;
        if (reply.is_error() && ParseRedirection(reply.str, &redirection)) {
          if (redirection.host.empty()) redirection.host = nodes_[node].address.host;
          size_t target = NodeIndex(redirection.host, redirection.port);
          if (redirection.ask) {
            (*ask_node)[i] = target;
          } else {
            moved->emplace_back(redirection.slot, target);
          }
          *last_redirection = reply.str;
          redirected->push_back(i);
          continue;
        }
        if (reply.is_error() && reply.str.starts_with("CLUSTERDOWN")) map_stale_ = true;
        (*replies)[i] = std::move(reply);
      }
    }
  }

  Status TooManyRedirections(const RedisCommand& command, const std::string& last_redirection) {
    map_stale_ = true;
    std::string message = "Redis Cluster at ";
    message += server();
    message += ": ";
    message += command.argv[0];
    message += " still redirected after ";
    message += std::to_string(kMaxRedirections);
    message += " redirections (last: ";
    message += last_redirection;
    message += "); is the cluster resharding or misconfigured?";
    return Status::Unavailable(std::move(message));
  }

  // Runs `commands` on node `index`, (re)connecting first. A network fault drops the connection
  // and marks the slot map stale, so the next call reads it again (a failover may have moved the
  // node's slots).
  Status RunOn(size_t index, std::span<const RedisCommand> commands,
               std::vector<RedisReply>* replies) {
    if (Status s = SendTo(index, commands); !s.ok()) return s;
    return ReceiveFrom(index, commands, replies);
  }

  // The replicas of each of `masters` whose count is unknown or older than a second, from the
  // master itself: ROLE lists the replicas that are online (in sync), those WAIT counts. The slot
  // map is not used: a node's view of the others' replicas lags behind the masters' own.
  Status CountReplicas(const std::vector<size_t>& masters) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<size_t> asked;
    for (size_t node : masters) {
      if (nodes_[node].replicas < 0 || now - nodes_[node].replicas_read > kReplicaCountAge) {
        asked.push_back(node);
      }
    }
    const std::vector<RedisCommand> roles(asked.size(), RedisCommand{{"ROLE"}, -1});
    std::vector<RedisReply> got;
    if (Status s = RunOnEach(asked, roles, &got); !s.ok()) return s;
    for (size_t i = 0; i < asked.size(); ++i) {
      const RedisReply& role = got[i];
      Node& node = nodes_[asked[i]];
      node.replicas_read = now;
      // ["master", offset, [[host, port, offset], ...]]; a node no longer master (a failover
      // since) took no write of this call that a replica of its could hold: none to wait for.
      const bool master = role.type == RedisReply::Type::kArray && role.elements.size() >= 3 &&
                          role.elements[0].str == "master";
      if (!master) map_stale_ = true;
      node.replicas = master ? static_cast<int>(role.elements[2].elements.size()) : 0;
    }
    return Status::Ok();
  }

  // commands[i] on nodes[i] (distinct nodes), all sent before any reply is read; (*replies)[i]
  // answers it.
  Status RunOnEach(const std::vector<size_t>& nodes, const std::vector<RedisCommand>& commands,
                   std::vector<RedisReply>* replies) {
    replies->assign(nodes.size(), RedisReply{});
    Status failed = Status::Ok();
    std::vector<bool> sent(nodes.size(), false);
    for (size_t i = 0; i < nodes.size(); ++i) {
      Status s = SendTo(nodes[i], std::span(&commands[i], 1));
      sent[i] = s.ok();
      if (!s.ok() && failed.ok()) failed = s;
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!sent[i]) continue;  // every connection that was sent to is read, to stay in step
      std::vector<RedisReply> got;
      Status s = ReceiveFrom(nodes[i], std::span(&commands[i], 1), &got);
      if (!s.ok()) {
        if (failed.ok()) failed = s;
        continue;
      }
      (*replies)[i] = std::move(got[0]);
    }
    return failed;
  }

  Status SendTo(size_t index, std::span<const RedisCommand> commands) {
    Node& node = nodes_[index];
    if (node.connection == nullptr || node.connection->broken()) {
      node.connection.reset();
      auto opened = RedisConnection::Open(node.address, timeouts_);
      if (!opened.ok()) {
        map_stale_ = true;
        return opened.status();
      }
      node.connection = std::move(opened).value();
    }
    return Checked(index, node.connection->Send(commands));
  }

  Status ReceiveFrom(size_t index, std::span<const RedisCommand> commands,
                     std::vector<RedisReply>* replies) {
    return Checked(index, nodes_[index].connection->Receive(commands, replies));
  }

  Status Checked(size_t index, Status s) {
    if (!s.ok()) {
      map_stale_ = true;
      if (nodes_[index].connection->broken()) nodes_[index].connection.reset();
    }
    return s;
  }

  Status ReadSlotMap(size_t index) {
    std::vector<RedisReply> got;
    RedisCommand slots{{"CLUSTER", "SLOTS"}, -1};
    if (Status s = RunOn(index, std::span(&slots, 1), &got); !s.ok()) return s;
    const std::string host = nodes_[index].address.host;
    const std::string node_server = nodes_[index].address.ToString();
    if (got[0].is_error()) return RedisErrorStatus(node_server, "CLUSTER SLOTS", got[0]);
    std::vector<SlotRange> ranges;
    if (!ParseClusterSlots(got[0], host, &ranges)) {
      return Status::FailedPrecondition(node_server +
                                        ": CLUSTER SLOTS: a reply that is not a slot map");
    }
    std::fill(slot_node_.begin(), slot_node_.end(), kNoNode);
    masters_.clear();
    for (const SlotRange& range : ranges) {
      size_t node = NodeIndex(range.host, range.port);
      for (int slot = range.first; slot <= range.last; ++slot) slot_node_[slot] = node;
      bool known = false;
      for (size_t master : masters_) known = known || master == node;
      if (!known) masters_.push_back(node);
    }
    return Status::Ok();
  }

  RedisTimeouts timeouts_;
  std::vector<Node> nodes_;        // every node ever named; never shrinks (indices stay valid)
  std::vector<size_t> slot_node_;  // slot -> index in nodes_, kNoNode when unserved
  std::vector<size_t> masters_;    // the nodes that serve slots, in map order
  bool map_stale_ = false;         // read the slot map again before the next command
};

}  // namespace

uint16_t RedisKeySlot(std::string_view key) {
  // Hash tags: the bytes between the first '{' and the first '}' after it, when there are any.
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return static_cast<uint16_t>(Crc16(key) & (kSlotCount - 1));
}

Result<std::unique_ptr<RedisClient>> ConnectRedisCluster(const RedisAddress& address,
                                                         const RedisTimeouts& timeouts,
                                                         std::unique_ptr<RedisConnection> seed) {
  std::unique_ptr<ClusterRedisClient> client(
      new ClusterRedisClient(address, timeouts, std::move(seed)));
  if (Status s = client->RefreshSlotMap(); !s.ok()) return s;
  return std::unique_ptr<RedisClient>(std::move(client));
}

}  // namespace urlsieve
