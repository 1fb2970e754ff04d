#include "dedup/redis_cluster_client.h"

namespace urlsieve {

uint16_t RedisKeySlot(std::string_view) { return 0; }

Result<std::unique_ptr<RedisClient>> ConnectRedisCluster(const RedisAddress& address,
                                                         const RedisTimeouts&,
                                                         std::unique_ptr<RedisConnection>) {
  return Status::Unsupported(address.ToString() + ": Redis Cluster support is not built yet");
}

}  // namespace urlsieve
