// The Redis plumbing a crawl cluster's coordinator and status reader share: a pool of clients
// (a RedisClient serves one thread at a time), FUNCTION LOAD of the cluster's library, and
// pipelines of FCALLs that load the library again when a server answers "Function not found"
// (a restart without persistence, FUNCTION FLUSH) and re-run only the calls that did not run.
//
// Thread-safety: ClusterClientPool is thread-safe (one mutex); the functions use the client
// they are given.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_REDIS_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_REDIS_H_

#include <initializer_list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "redis/redis_address.h"
#include "redis/redis_client.h"
#include "redis/redis_connection.h"
#include "redis/redis_reply.h"

namespace urlsieve {

class ClusterClientPool {
 public:
  ClusterClientPool(RedisAddress address, RedisTimeouts timeouts)
      : address_(std::move(address)), timeouts_(timeouts) {}
  // A pooled client, or a new connection (kUnavailable naming the server when there is none).
  Result<std::unique_ptr<RedisClient>> Take();
  void Give(std::unique_ptr<RedisClient> client);

 private:
  const RedisAddress address_;
  const RedisTimeouts timeouts_;
  std::mutex mu_;
  std::vector<std::unique_ptr<RedisClient>> idle_;
};

// FCALL function numkeys keys... args... (routed by its first key).
RedisCommand ClusterFcall(const char* function, std::initializer_list<std::string> keys,
                          std::vector<std::string> args);

// FUNCTION LOAD REPLACE of the cluster's library on every master. FailedPrecondition for a Redis
// without Functions (before 7.0).
Status LoadClusterLibrary(RedisClient& client);

// Runs the pipeline; the calls answered "Function not found" run again once the library is
// loaded. A fault of the connection is the Status; error replies are replies.
Status RunClusterFunctions(RedisClient& client, std::span<const RedisCommand> commands,
                           std::vector<RedisReply>* replies);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_REDIS_H_
