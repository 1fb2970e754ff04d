// RedisConnection: one blocking hiredis connection to one Redis node, authenticated and on its
// database, that sends pipelines of commands and copies their replies out.
//
// Faults: a refused or lost connection, a timeout, or bytes that are not the Redis protocol end the
// connection (broken() turns true) and are a non-OK Status that names the node and what was being
// done: kUnavailable for the network (worth a retry on a new connection), kFailedPrecondition for
// a peer that is not a Redis server or refused the credentials. Commands of a failed pipeline may
// or may not have run. A timeout, and the next answer after one, are told to the user once per
// outage of the server (redis_waits.h).
//
// Thread-safety: none; one thread at a time (RedisClient pools them).
#ifndef URLSIEVE_REDIS_REDIS_CONNECTION_H_
#define URLSIEVE_REDIS_REDIS_CONNECTION_H_

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "redis/redis_address.h"
#include "redis/redis_reply.h"

struct redisContext;

namespace urlsieve {

struct RedisTimeouts {
  double connect_s = 2.0;
  double command_s = 10.0;  // a pipeline waiting longer than this for a reply fails
};

class RedisConnection {
 public:
  // Connects to host:port of `address` (its credentials and db apply), runs AUTH and SELECT.
  static Result<std::unique_ptr<RedisConnection>> Open(const RedisAddress& address,
                                                       const RedisTimeouts& timeouts);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends the commands in one pipeline; (*replies)[i] answers commands[i]. An error reply is a
  // reply, not a Status.
  Status Pipeline(std::span<const RedisCommand> commands, std::vector<RedisReply>* replies);
  // Pipeline's two halves, so that a caller can keep several servers working at once (the cluster
  // client sends to every master, then reads from each): Send writes the commands out; Receive
  // reads their replies, one per command of `commands`, what the last Send sent.
  Status Send(std::span<const RedisCommand> commands);
  Status Receive(std::span<const RedisCommand> commands, std::vector<RedisReply>* replies);
  Result<RedisReply> Run(const RedisCommand& command);

  bool broken() const { return broken_; }
  // "redis://host:port/db": for messages.
  const std::string& server() const { return server_; }

 private:
  RedisConnection(redisContext* context, std::string server)
      : context_(context), server_(std::move(server)) {}
  Status Fail(std::string_view what);

  redisContext* context_;
  std::string server_;
  double command_timeout_s_ = 0;  // for the wait notice (redis_waits.h)
  bool broken_ = false;
};

}  // namespace urlsieve

#endif  // URLSIEVE_REDIS_REDIS_CONNECTION_H_
