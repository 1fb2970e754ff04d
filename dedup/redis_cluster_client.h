// The Redis Cluster side of RedisClient (redis_client.h): the slot map from CLUSTER SLOTS, one
// RedisConnection per master, commands routed by the CRC16 slot of their key (hash tags honoured,
// https://redis.io/docs/reference/cluster-spec/#hash-tags), MOVED (refresh the map, resend) and ASK
// (ASKING, resend once to that node) followed.
//
// Thread-safety: as RedisClient: none.
#ifndef URLSIEVE_DEDUP_REDIS_CLUSTER_CLIENT_H_
#define URLSIEVE_DEDUP_REDIS_CLUSTER_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "dedup/redis_client.h"

namespace urlsieve {

// The cluster slot of `key`: CRC16 (XMODEM) of the key, or of its {hash tag}, mod 16384.
uint16_t RedisKeySlot(std::string_view key);

// A cluster client that starts from `seed`, an open connection to one node of the cluster.
Result<std::unique_ptr<RedisClient>> ConnectRedisCluster(const RedisAddress& address,
                                                         const RedisTimeouts& timeouts,
                                                         std::unique_ptr<RedisConnection> seed);

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_REDIS_CLUSTER_CLIENT_H_
