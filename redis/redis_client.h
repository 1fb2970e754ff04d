// RedisClient: a connection to a Redis deployment, a standalone server or a Redis Cluster, that
// runs pipelines of commands. On a cluster each command goes to the master owning its key's slot
// (RedisCommand::key_index; keys sharing a {hash tag} share a slot), following MOVED and ASK
// redirections; the caller sees one pipeline either way.
//
// Replication: a Redis Cluster master answers a write before its replicas have it (asynchronous
// replication), so a failover may lose the last writes it answered. WaitForReplicas is the
// caller's way to close that window where losing a write would lose data rather than repeat work
// (docs/features/cluster.md, "Failover").
//
// Faults: a call whose connection was lost, timed out or refused returns kUnavailable naming the
// server (some of its commands may have run); the next call connects again, so a caller that
// retries recovers when the server is back. An error reply is a reply (RedisErrorStatus turns it
// into a Status).
//
// Thread-safety: none; one thread at a time. Threads that share a deployment keep a client each.
#ifndef URLSIEVE_REDIS_REDIS_CLIENT_H_
#define URLSIEVE_REDIS_REDIS_CLIENT_H_

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "redis/redis_address.h"
#include "redis/redis_connection.h"
#include "redis/redis_reply.h"

namespace urlsieve {

class RedisClient {
 public:
  // Connects to `address`; when the server there is a cluster node (INFO cluster says
  // cluster_enabled:1) the client is a cluster client that learns the slot map from it.
  static Result<std::unique_ptr<RedisClient>> Connect(const RedisAddress& address,
                                                      const RedisTimeouts& timeouts = {});
  virtual ~RedisClient() = default;

  // (*replies)[i] answers commands[i]. On a cluster the commands are grouped by node and
  // pipelined to each, and the replies put back in order.
  virtual Status Pipeline(std::span<const RedisCommand> commands,
                          std::vector<RedisReply>* replies) = 0;
  Result<RedisReply> Run(const RedisCommand& command);
  // Runs `command` on every master (FUNCTION LOAD, INFO memory, DBSIZE): one reply per master.
  virtual Status OnEveryMaster(const RedisCommand& command, std::vector<RedisReply>* replies) = 0;

  // Waits until the replicas of each master serving one of `keys` have every write this client
  // sent that master (WAIT, on the connection that sent them; all masters are sent theirs before
  // any reply is read), at most `timeout_ms` each. The replicas are those the master says are
  // online (in sync); a master without one is not waited for, nor is a
  // standalone server (without Sentinel, which urlsieve does not follow, nothing fails over to
  // its replicas). *lagging (when given): the masters whose replicas did not all acknowledge in
  // time — their writes are only as safe as asynchronous replication makes them — and their
  // replicas are counted again on the next call. A fault is kUnavailable, as for Pipeline: the
  // writes may be lost.
  virtual Status WaitForReplicas(std::span<const std::string> keys, int timeout_ms,
                                 int* lagging) = 0;

  virtual bool is_cluster() const = 0;
  const RedisAddress& address() const { return address_; }
  // "redis://host:port/db" (no password): for messages.
  std::string server() const { return address_.ToString(); }

 protected:
  explicit RedisClient(RedisAddress address) : address_(std::move(address)) {}

 private:
  RedisAddress address_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_REDIS_REDIS_CLIENT_H_
