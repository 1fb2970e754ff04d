// The Redis Cluster side of RedisClient (redis_client.h): the slot map from CLUSTER SLOTS, one
// RedisConnection per master, commands routed by the CRC16 slot of their key (hash tags honoured,
// https://redis.io/docs/reference/cluster-spec/#hash-tags), MOVED (refresh the map, resend) and ASK
// (ASKING, resend once to that node) followed.
//
// A pipeline is split by node: each master gets its commands as one pipeline, all masters are
// sent theirs before any reply is read (a call waits for the slowest master, not the sum), and
// the replies are put back in the caller's order. Redirected commands go again, in a next round. A
// command redirected more than 5 times in one call fails (kUnavailable) rather than loop. A node
// that is lost or refuses the connection fails the call with kUnavailable naming the node, and the
// next call reads the slot map again from any reachable node (those with an open connection first,
// then the seed, then every node ever named) and reconnects, so a failover or a restarted node
// heals. A slot no master serves (the cluster is down or half-built) is kUnavailable too.
//
// WaitForReplicas sends WAIT to the masters of the keys named, on the connections that carried
// the writes, for as many replicas as each master said were online when last asked (ROLE, at most
// a second before; the slot map is not used: a node's view of the others' replicas lags).
//
// Thread-safety: as RedisClient: none; one thread at a time (one client per thread).
#ifndef URLSIEVE_REDIS_REDIS_CLUSTER_CLIENT_H_
#define URLSIEVE_REDIS_REDIS_CLUSTER_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "redis/redis_client.h"

namespace urlsieve {

// The cluster slot of `key`: CRC16 (XMODEM) of the key, or of its {hash tag}, mod 16384.
uint16_t RedisKeySlot(std::string_view key);

// A cluster client that starts from `seed`, an open connection to one node of the cluster.
Result<std::unique_ptr<RedisClient>> ConnectRedisCluster(const RedisAddress& address,
                                                         const RedisTimeouts& timeouts,
                                                         std::unique_ptr<RedisConnection> seed);

}  // namespace urlsieve

#endif  // URLSIEVE_REDIS_REDIS_CLUSTER_CLIENT_H_
