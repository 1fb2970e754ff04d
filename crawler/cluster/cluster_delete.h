// DeleteCluster: `urlsieve cluster delete` (docs/usage/cluster.md): every Redis key of a finished
// or stopped crawl cluster — its seen set (RedisSeenSet::DeleteAll), its content-seen set
// (RedisContentSeenSet::Delete), each partition's lease,
// inbox, fetch records and re-crawl mark, the seeds, the node registry and hashes and, first, the
// cluster hash (so a node that still beats finds "coordination state lost" rather than a set half
// gone). Refused while a node is alive (its heartbeat has not expired), naming the nodes. The
// seen set's replay records of recent calls (`done:<token>`, redis_seen_set.h) expire by
// themselves within 300 s.
//
// Thread-safety: a function; one call at a time per cluster.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_DELETE_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_DELETE_H_

#include <cstdint>
#include <string>

#include "base/status.h"
#include "redis/redis_address.h"

namespace urlsieve {

// How many keys were deleted (the seen set's and the cluster's). NotFound: no such cluster.
Result<uint64_t> DeleteCluster(const RedisAddress& address, const std::string& name);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_DELETE_H_
