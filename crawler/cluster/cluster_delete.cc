#include "crawler/cluster/cluster_delete.h"

#include <memory>
#include <utility>
#include <vector>

#include "crawler/cluster/cluster_coordinator.h"
#include "crawler/cluster/cluster_keys.h"
#include "crawler/cluster/cluster_seeds.h"
#include "dedup/content/redis_content_seen_set.h"
#include "dedup/redis_seen_set.h"
#include "redis/redis_client.h"

namespace urlsieve {

Result<uint64_t> DeleteCluster(const RedisAddress& address, const std::string& name) {
  Result<ClusterStatus> cluster = ReadClusterStatus(address, name);
  if (!cluster.ok()) return cluster.status();
  std::string alive;
  for (const ClusterNodeStatus& node : cluster->nodes) {
    if (node.alive) alive += (alive.empty() ? "" : ", ") + node.id;
  }
  const std::string what = "the crawl cluster '" + name + "' at " + address.ToString();
  if (!alive.empty()) {
    return Status::FailedPrecondition(what + " has live nodes (" + alive +
                                      "): stop them first (Ctrl-C), or wait until they finish");
  }
  // The seen set, opened read-only as `stats` opens it: whatever its kind.
  RedisSeenSetOptions options;
  options.address = address;
  options.name = name;
  options.read_only = true;
  std::vector<SeenNotice> notices;
  Result<std::unique_ptr<RedisSeenSet>> set = RedisSeenSet::Open(options, &notices);
  uint64_t deleted = 0;
  std::vector<std::string> keys = {ClusterMetaKey(name), ClusterNodesKey(name),
                                   ClusterSeedsKey(name)};
  for (const ClusterNodeStatus& node : cluster->nodes)
    keys.push_back(ClusterNodeKey(name, node.id));
  for (uint32_t p = 0; p < cluster->partitions; ++p) {
    for (std::string key : {ClusterLeaseKey(name, p), ClusterInboxKey(name, p),
                            ClusterRecordsKey(name, p), ClusterRecrawlKey(name, p)}) {
      keys.push_back(std::move(key));
    }
  }
  auto client = RedisClient::Connect(address);
  if (!client.ok()) return client.status();
  std::vector<RedisCommand> commands;
  for (const std::string& key : keys) commands.push_back(RedisCommand{{"DEL", key}, 1});
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR((*client)->Pipeline(commands, &replies));
  for (size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].is_error()) {
      return RedisErrorStatus(address.ToString(), "deleting " + what + " (DEL " + keys[i] + ")",
                              replies[i]);
    }
    deleted += replies[i].integer > 0 ? 1 : 0;
  }
  if (set.ok()) {
    Result<uint64_t> seen = (*set)->DeleteAll();
    if (!seen.ok()) return seen.status();
    deleted += *seen;
  } else if (set.status().code() != StatusCode::kNotFound) {
    return set.status();
  }
  // Its content-seen set (docs/features/content-seen.md, "Shared"), when its crawls kept one.
  RedisContentSeenSetOptions content_options;
  content_options.address = address;
  content_options.name = name;
  content_options.read_only = true;
  Result<std::unique_ptr<RedisContentSeenSet>> content = RedisContentSeenSet::Open(content_options);
  if (content.ok()) {
    Result<uint64_t> content_keys = (*content)->Delete();
    if (!content_keys.ok()) return content_keys.status();
    deleted += *content_keys;
  } else if (content.status().code() != StatusCode::kNotFound) {
    return content.status();
  }
  return deleted;
}

}  // namespace urlsieve
