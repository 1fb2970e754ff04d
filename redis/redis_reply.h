// RedisCommand and RedisReply: what goes to a Redis server and what comes back, as owned values
// (copied out of hiredis, so a reply outlives the connection that read it).
//
// Thread-safety: plain values.
#ifndef URLSIEVE_REDIS_REDIS_REPLY_H_
#define URLSIEVE_REDIS_REDIS_REPLY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace urlsieve {

struct RedisCommand {
  std::vector<std::string> argv;  // binary-safe arguments, the command name first
  // The argument that routes the command on a Redis Cluster: its key (FCALL's first key is
  // argv[3]). -1: the command has no key and may go to any node.
  int key_index = 1;
};

struct RedisReply {
  enum class Type : uint8_t { kNil, kString, kStatus, kError, kInteger, kArray };
  Type type = Type::kNil;
  std::string str;  // kString, kStatus, kError
  long long integer = 0;
  std::vector<RedisReply> elements;  // kArray

  bool is_error() const { return type == Type::kError; }
};

// The Status for an error reply to `what` (e.g. "running urlsieve_insert") from `server`:
// kUnavailable for the transient ones a retry may cure (LOADING, BUSY, TRYAGAIN, CLUSTERDOWN,
// MASTERDOWN, READONLY after a failover), kFailedPrecondition for the rest (WRONGTYPE, NOAUTH, a
// script error), each naming the server and what was being done.
Status RedisErrorStatus(std::string_view server, std::string_view what, const RedisReply& reply);

}  // namespace urlsieve

#endif  // URLSIEVE_REDIS_REDIS_REPLY_H_
