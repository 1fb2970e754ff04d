// ReadClusterStatus and ClusterStatus's forms (crawler/cluster/cluster_coordinator.h): `urlsieve
// cluster status`. It reads with plain read-only commands, so that looking at a cluster never
// writes to it (not even FUNCTION LOAD); liveness is judged by the clock of the server holding the
// cluster's keys (EVAL_RO of TIME routed by the meta key), never by this machine's.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crawler/cluster/cluster_coordinator.h"
#include "crawler/cluster/cluster_keys.h"
#include "dedup/redis_seen_set.h"
#include "redis/redis_client.h"

namespace urlsieve {
namespace {

constexpr const char* kTimeScript =
    "local t = redis.call('TIME') return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)";

std::map<std::string, std::string> HashOf(const RedisReply& reply) {
  std::map<std::string, std::string> fields;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    fields[reply.elements[i].str] = reply.elements[i + 1].str;
  }
  return fields;
}

uint64_t Number(const std::string& text) { return std::strtoull(text.c_str(), nullptr, 10); }

// What every step of a status read needs: the connection, and the names its errors give.
struct StatusRead {
  RedisClient& client;
  std::string_view name;
  const std::string& server;
  const std::string& what;  // "the crawl cluster '<name>' at <server>"
};

// The node ids of the registry (a ZRANGE WITHSCORES reply) into status->nodes, and each one's
// expiry (its score) into `expiries`.
void ListNodes(const RedisReply& registry, ClusterStatus* status,
               std::vector<long long>* expiries) {
  for (size_t i = 0; i + 1 < registry.elements.size(); i += 2) {
    ClusterNodeStatus node;
    node.id = registry.elements[i].str;
    expiries->push_back(std::atoll(registry.elements[i + 1].str.c_str()));
    status->nodes.push_back(std::move(node));
  }
}

// The first round: the meta hash (partitions, seeded), the server's clock in milliseconds and
// the node registry.
Status ReadMetaAndRegistry(const StatusRead& read, ClusterStatus* status, long long* now_ms,
                           std::vector<long long>* expiries) {
  const std::string meta_key = ClusterMetaKey(read.name);
  std::vector<RedisCommand> commands = {
      RedisCommand{{"HGETALL", meta_key}, 1},
      RedisCommand{{"EVAL_RO", kTimeScript, "1", meta_key}, 3},
      RedisCommand{{"ZRANGE", ClusterNodesKey(read.name), "0", "-1", "WITHSCORES"}, 1}};
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(read.client.Pipeline(commands, &replies));
  for (size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].is_error()) {
      return RedisErrorStatus(
          read.server, "reading " + read.what + " (" + commands[i].argv[0] + ")", replies[i]);
    }
  }
  std::map<std::string, std::string> meta = HashOf(replies[0]);
  if (meta.empty()) {
    return Status::NotFound("no crawl cluster named '" + std::string(read.name) + "' at " +
                            read.server);
  }
  if (meta["format"] != kClusterFormat) {
    return Status::FailedPrecondition(read.what + ": " + meta_key +
                                      " is not a urlsieve crawl cluster");
  }
  *now_ms = replies[1].integer;
  status->partitions = static_cast<uint32_t>(Number(meta["partitions"]));
  status->seeded = meta["seeded"] == "1";
  status->recrawl_round = Number(meta["recrawl_round"]);
  if (status->partitions == 0 || status->partitions > kMaxClusterPartitions) {
    return Status::Corruption(read.what + ": its partition count '" + meta["partitions"] +
                              "' is out of range");
  }
  ListNodes(replies[2], status, expiries);
  return Status::Ok();
}

// The second round: each node's hash, then each partition's lease, inbox length, pending
// entries, fetch records and last re-crawl round scanned (kPartitionCommands a partition).
constexpr size_t kPartitionCommands = 5;

std::vector<RedisCommand> NodeAndPartitionCommands(std::string_view name,
                                                   const ClusterStatus& status) {
  std::vector<RedisCommand> commands;
  for (const ClusterNodeStatus& node : status.nodes) {
    commands.push_back(RedisCommand{{"HGETALL", ClusterNodeKey(name, node.id)}, 1});
  }
  for (uint32_t p = 0; p < status.partitions; ++p) {
    const std::string inbox = ClusterInboxKey(name, p);
    commands.push_back(RedisCommand{{"GET", ClusterLeaseKey(name, p)}, 1});
    commands.push_back(RedisCommand{{"XLEN", inbox}, 1});
    commands.push_back(RedisCommand{{"XPENDING", inbox, std::string(kClusterInboxGroup)}, 1});
    commands.push_back(RedisCommand{{"HLEN", ClusterRecordsKey(name, p)}, 1});
    commands.push_back(RedisCommand{{"GET", ClusterRecrawlKey(name, p)}, 1});
  }
  return commands;
}

// The nodes' fields from the second round's first replies (one a node); alive means the
// registry's expiry is later than the server's clock.
Status FillNodes(const StatusRead& read, const std::vector<RedisReply>& replies, long long now_ms,
                 const std::vector<long long>& expiries, ClusterStatus* status) {
  for (size_t i = 0; i < status->nodes.size(); ++i) {
    if (replies[i].is_error()) {
      return RedisErrorStatus(
          read.server, "reading " + read.what + " (node " + status->nodes[i].id + ")", replies[i]);
    }
    std::map<std::string, std::string> fields = HashOf(replies[i]);
    ClusterNodeStatus& node = status->nodes[i];
    node.host = fields["host"];
    node.pid = std::atoll(fields["pid"].c_str());
    node.state = fields["state"];
    node.alive = expiries[i] > now_ms;
    node.heartbeat_age_ms = fields.count("beat_ms") > 0
                                ? std::max(0LL, now_ms - std::atoll(fields["beat_ms"].c_str()))
                                : 0;
    node.counters.pages = Number(fields["pages"]);
    node.counters.errors = Number(fields["errors"]);
    node.counters.links_new = Number(fields["links_new"]);
    status->pages += node.counters.pages;
    status->errors += node.counters.errors;
  }
  return Status::Ok();
}

// The partitions' leases and inboxes from the second round's replies after the nodes', and the
// leases each node holds.
Status FillPartitions(const StatusRead& read, const std::vector<RedisReply>& replies,
                      ClusterStatus* status) {
  const size_t first_partition = status->nodes.size();
  std::map<std::string, uint32_t> leases;
  for (uint32_t p = 0; p < status->partitions; ++p) {
    const size_t at = first_partition + kPartitionCommands * p;
    const RedisReply& lease = replies[at];
    const RedisReply& length = replies[at + 1];
    const RedisReply& pending = replies[at + 2];
    const RedisReply& records = replies[at + 3];
    const RedisReply& scanned = replies[at + 4];
    for (const RedisReply* reply : {&lease, &length, &records, &scanned}) {
      if (reply->is_error()) {
        return RedisErrorStatus(
            read.server, "reading " + read.what + " (partition " + std::to_string(p) + ")", *reply);
      }
    }
    status->fetch_records += static_cast<uint64_t>(std::max(0LL, records.integer));
    if (status->recrawl_round > 0 && Number(scanned.str) >= status->recrawl_round) {
      ++status->recrawl_scanned;
    }
    std::string_view owner = ClusterLeaseOwner(lease.str);
    if (lease.type != RedisReply::Type::kString || owner.empty()) {
      ++status->unowned_partitions;
    } else {
      ++leases[std::string(owner)];
    }
    status->pending += static_cast<uint64_t>(std::max(0LL, length.integer));
    // XPENDING of a stream or group that does not exist yet is an error: nothing in flight.
    if (!pending.is_error() && !pending.elements.empty()) {
      status->in_flight += static_cast<uint64_t>(std::max(0LL, pending.elements[0].integer));
    }
  }
  // A lease has no TTL: one of a node that is not alive is stale, its partition unowned until a
  // live node takes it over.
  for (ClusterNodeStatus& node : status->nodes) {
    auto it = leases.find(node.id);
    if (it == leases.end()) continue;
    if (node.alive) {
      node.partitions = it->second;
    } else {
      status->unowned_partitions += it->second;
    }
    leases.erase(it);
  }
  for (const auto& [owner, count] : leases) status->unowned_partitions += count;  // no such node
  return Status::Ok();
}

}  // namespace

Result<ClusterStatus> ReadClusterStatus(const RedisAddress& address, std::string_view name,
                                        const RedisTimeouts& timeouts) {
  const std::string server = address.ToString();
  std::string what = "the crawl cluster '";
  what += name;
  what += "' at ";
  what += server;
  if (!IsClusterIdentifier(name)) {
    return Status::InvalidArgument("the cluster name '" + std::string(name) +
                                   "' must be 1-64 characters of [A-Za-z0-9_.-]");
  }
  auto client = RedisClient::Connect(address, timeouts);
  if (!client.ok()) return client.status();
  const StatusRead read{**client, name, server, what};
  ClusterStatus status;
  long long now_ms = 0;
  std::vector<long long> expiries;
  URLSIEVE_RETURN_IF_ERROR(ReadMetaAndRegistry(read, &status, &now_ms, &expiries));
  status.name = std::string(name);
  status.server = server;
  const std::vector<RedisCommand> commands = NodeAndPartitionCommands(name, status);
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR((*client)->Pipeline(commands, &replies));
  URLSIEVE_RETURN_IF_ERROR(FillNodes(read, replies, now_ms, expiries, &status));
  URLSIEVE_RETURN_IF_ERROR(FillPartitions(read, replies, &status));
  return status;
}

std::string ClusterStatus::ToJson() const {
  nlohmann::ordered_json json;
  json["name"] = name;
  json["server"] = server;
  json["partitions"] = partitions;
  json["seeded"] = seeded;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ClusterNodeStatus& node : nodes) {
    nlohmann::ordered_json entry;
    entry["id"] = node.id;
    entry["host"] = node.host;
    entry["pid"] = node.pid;
    entry["state"] = node.state;
    entry["alive"] = node.alive;
    entry["heartbeat_age_ms"] = node.heartbeat_age_ms;
    entry["partitions"] = node.partitions;
    entry["pages"] = node.counters.pages;
    entry["errors"] = node.counters.errors;
    entry["links_new"] = node.counters.links_new;
    list.push_back(std::move(entry));
  }
  json["nodes"] = std::move(list);
  json["unowned_partitions"] = unowned_partitions;
  json["pending"] = pending;
  json["in_flight"] = in_flight;
  json["pages"] = pages;
  json["errors"] = errors;
  json["fetch_records"] = fetch_records;
  json["recrawl"] = {{"round", recrawl_round}, {"partitions_scanned", recrawl_scanned}};
  return json.dump(2);
}

std::string ClusterStatus::ToText() const {
  std::string out = "cluster " + name + " at " + server + ": " + std::to_string(partitions) +
                    " partitions, " + (seeded ? "seeded" : "not seeded yet") + "\n";
  size_t alive = 0;
  for (const ClusterNodeStatus& node : nodes) alive += node.alive ? 1 : 0;
  out += "nodes: " + std::to_string(alive) + " alive of " + std::to_string(nodes.size()) + "\n";
  for (const ClusterNodeStatus& node : nodes) {
    out += "  " + node.id + "  " + (node.alive ? "alive" : "dead") + "  " + node.state + "  " +
           node.host + " pid " + std::to_string(node.pid) + "  heartbeat " +
           std::to_string(node.heartbeat_age_ms) + " ms ago  " + std::to_string(node.partitions) +
           " partitions  " + std::to_string(node.counters.pages) + " pages  " +
           std::to_string(node.counters.errors) + " errors\n";
  }
  out += "unowned partitions: " + std::to_string(unowned_partitions) + "\n";
  out += "pending: " + std::to_string(pending) + " (in flight " + std::to_string(in_flight) + ")\n";
  out += "pages: " + std::to_string(pages) + ", errors: " + std::to_string(errors) + "\n";
  out += "fetch records: " + std::to_string(fetch_records) + "\n";
  if (recrawl_round > 0) {
    out += "re-crawl round " + std::to_string(recrawl_round) + ": " +
           std::to_string(recrawl_scanned) + " of " + std::to_string(partitions) +
           " partitions scanned\n";
  }
  return out;
}

}  // namespace urlsieve
