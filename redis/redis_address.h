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

// The environment variable a Redis password may come from (RedisAddress::Parse).
inline constexpr const char* kRedisPasswordVariable = "URLSIEVE_REDIS_PASSWORD";

// The password in the first line of `path` (a trailing CR or LF dropped), for
// --redis-password-file: an error names the file and what failed (never the password).
Result<std::string> ReadRedisPasswordFile(const std::string& path);

// A set's name in urlsieve's key names (a seen set's, a content-seen set's, a cluster's): 1-64
// characters of [A-Za-z0-9_.-], so that it never holds a hash tag's brace or a key separator.
bool IsValidRedisSetName(std::string_view name);

struct RedisAddress {
  std::string host;
  int port = 6379;
  std::string user;      // empty: the default user (AUTH password), as before Redis 6 ACLs
  std::string password;  // empty: no AUTH
  int db = 0;            // SELECT db (standalone servers only; a cluster has db 0 alone)

  // InvalidArgument, naming the URL (its password hidden) and what is wrong. A URL without a
  // password takes the environment's, so that none need be on a command line (visible in `ps`):
  // URLSIEVE_REDIS_PASSWORD, else REDISCLI_AUTH (the variable redis-cli reads); empty ones are
  // ignored.
  static Result<RedisAddress> Parse(std::string_view url);
  // "redis://host:port/db", never the password: for messages.
  std::string ToString() const;
};

}  // namespace urlsieve

#endif  // URLSIEVE_REDIS_REDIS_ADDRESS_H_
