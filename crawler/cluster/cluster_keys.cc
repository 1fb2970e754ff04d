#include "crawler/cluster/cluster_keys.h"

#include "dedup/redis_seen_set.h"

namespace urlsieve {
namespace {

std::string ClusterKey(std::string_view name, std::string_view suffix) {
  std::string key = "urlsieve:{";
  key += name;
  key += "}:";
  key += suffix;
  return key;
}

// A key of partition p: its seen-set shard's hash tag, "urlsieve:{NAME:p}:<suffix>".
std::string PartitionKey(std::string_view name, uint32_t partition, std::string_view suffix) {
  std::string key = RedisShardKeyPrefix(name, partition);
  key += suffix;
  return key;
}

}  // namespace

std::string ClusterMetaKey(std::string_view name) { return ClusterKey(name, "cluster"); }
std::string ClusterNodesKey(std::string_view name) { return ClusterKey(name, "nodes"); }

std::string ClusterNodeKey(std::string_view name, std::string_view node_id) {
  std::string key = ClusterKey(name, "node:");
  key += node_id;
  return key;
}

std::string ClusterLeaseKey(std::string_view name, uint32_t partition) {
  return PartitionKey(name, partition, "lease");
}

std::string ClusterInboxKey(std::string_view name, uint32_t partition) {
  return PartitionKey(name, partition, kClusterInboxSuffix);
}

std::string ClusterRecordsKey(std::string_view name, uint32_t partition) {
  return PartitionKey(name, partition, "records");
}

std::string ClusterRecrawlKey(std::string_view name, uint32_t partition) {
  return PartitionKey(name, partition, "recrawl");
}

std::string ClusterLeaseValue(std::string_view node_id, std::string_view token, uint64_t tenure) {
  std::string value(node_id);
  value += '@';
  value += token;
  value += '#';
  value += std::to_string(tenure);
  return value;
}

std::string_view ClusterLeaseOwner(std::string_view value) {
  size_t at = value.find('@');
  if (at == std::string_view::npos) return {};
  return value.substr(0, at);
}

bool IsClusterIdentifier(std::string_view text) {
  if (text.empty() || text.size() > 64) return false;
  for (char c : text) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace urlsieve
