// The Redis keys of a crawl cluster (docs/features/cluster.md, "The crawl cluster"). A partition's
// keys share the hash tag of the routed seen set's shard p, "{NAME:p}" (RedisShardKeyPrefix), so
// that its lease, its inbox and its seen-set shard live in one Redis Cluster slot; the cluster's
// own keys share "{NAME}":
//   urlsieve:{NAME}:cluster   hash: format, version, identity, partitions, settings, seeded
//   urlsieve:{NAME}:nodes     sorted set: node id -> heartbeat expiry (ms, Redis TIME)
//   urlsieve:{NAME}:node:ID   hash: token, host, pid, state, counters, beat_ms
//   urlsieve:{NAME:p}:lease   string with a TTL: "ID@TOKEN" of the owner, or "released"
//   urlsieve:{NAME:p}:inbox   stream (consumer group kClusterInboxGroup): the routed seen set
//                             appends each new URL's payload to it (RedisNewKeyStream)
//   urlsieve:{NAME:p}:records hash: URL -> its fetch record (flag + fetch_record_text.h), written
//                             with the acknowledgement of its page: they travel with p
//   urlsieve:{NAME:p}:recrawl string: the last re-crawl round whose scan of p's records is through
//
// Thread-safety: pure functions.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_KEYS_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace urlsieve {

inline constexpr std::string_view kClusterFormat = "urlsieve-cluster";
inline constexpr int kClusterFormatVersion = 2;
// A partition's inbox: the routed seen set's new-key stream of shard p (RedisNewKeyStream:
// {kClusterInboxSuffix, kClusterInboxGroup}), "urlsieve:{NAME:p}:inbox", and its consumer group.
inline constexpr std::string_view kClusterInboxSuffix = "inbox";
inline constexpr std::string_view kClusterInboxGroup = "crawl";
// A lease's value during the hand-over cool-down.
inline constexpr std::string_view kClusterLeaseReleased = "released";

std::string ClusterMetaKey(std::string_view name);
std::string ClusterNodesKey(std::string_view name);
std::string ClusterNodeKey(std::string_view name, std::string_view node_id);
std::string ClusterLeaseKey(std::string_view name, uint32_t partition);
std::string ClusterInboxKey(std::string_view name, uint32_t partition);
std::string ClusterRecordsKey(std::string_view name, uint32_t partition);
std::string ClusterRecrawlKey(std::string_view name, uint32_t partition);

// A lease's value: "ID@TOKEN#TENURE" (the token tells two instances of one node id apart, the
// tenure two spans of one instance's heartbeat with a lapse between); the node id of a value (""
// for "released" or nothing).
std::string ClusterLeaseValue(std::string_view node_id, std::string_view token, uint64_t tenure);
std::string_view ClusterLeaseOwner(std::string_view value);

// Whether `text` is 1-64 characters of [A-Za-z0-9_.-] (a cluster name or a node id).
bool IsClusterIdentifier(std::string_view text);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_KEYS_H_
