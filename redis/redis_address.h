// RedisAddress: where a Redis deployment is, parsed from
// `redis://[[user]:password@]host[:port][/db]` (the form redis-cli -u and most clients take). For a
// Redis Cluster the address is any one node; the others are found from it (redis_client.h).
//
// Thread-safety: a plain value.
#ifndef URLSIEVE_REDIS_REDIS_ADDRESS_H_
#define URLSIEVE_REDIS_REDIS_ADDRESS_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace urlsieve {

struct RedisAddress {
  std::string host;
  int port = 6379;
  std::string user;      // empty: the default user (AUTH password), as before Redis 6 ACLs
  std::string password;  // empty: no AUTH
  int db = 0;            // SELECT db (standalone servers only; a cluster has db 0 alone)

  // InvalidArgument, naming the URL (its password hidden) and what is wrong.
  static Result<RedisAddress> Parse(std::string_view url);
  // "redis://host:port/db", never the password: for messages.
  std::string ToString() const;
};

}  // namespace urlsieve

#endif  // URLSIEVE_REDIS_REDIS_ADDRESS_H_
