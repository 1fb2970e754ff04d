// The Redis Function library of RedisSeenSet (redis_seen_set.h): its Lua source, loaded by
// FUNCTION LOAD REPLACE when a set opens (and again when a server answers "Function not found",
// e.g. after a restart without persistence or a FUNCTION FLUSH). Each function runs atomically on
// the keys of one shard (one Redis Cluster slot, the hash tag {NAME:s}):
//   urlsieve_v1_create   KEYS: meta. ARGV: field, value, ... Creates the metadata hash unless it
//                        exists; returns the stored one (HGETALL).
//   urlsieve_v1_init     KEYS: the shard's count hash. ARGV: layer table, identity. Creates the
//                        shard (its state and its layer-0 string, at full size) unless it exists;
//                        an existing shard of another identity is an error.
//   urlsieve_v1_insert   KEYS: count. ARGV: exact (0/1), token, seq, claim log ("" none),
//                        generation, P, then per key its arguments (RedisKeyArguments). Returns
//                        [one character per key, '1' new; the shard's layers; its newest count].
//   urlsieve_v1_insert_routed  KEYS: count, the shard's inbox stream. ARGV: exact, token, seq,
//                        group, P, then per key its arguments (with its payload). Routed mode:
//                        insert's test-and-set, then XADD <inbox> * c <payload> per new key (the
//                        stream and its consumer group created first when the stream is absent).
//                        The same reply as insert.
//   urlsieve_v1_contains KEYS: count. ARGV: exact, P, per key its arguments (no payload). The
//                        same reply, '1' per contained key. No writes.
// Compatibility: a newer build adds functions or optional arguments, never changes what an
// existing one means, so an older binary's calls keep working after a newer one's FUNCTION LOAD
// REPLACE.
// See redis_seen_function.cc for the algorithm (docs/design.md, "The Redis seen set").
//
// Thread-safety: constants.
#ifndef URLSIEVE_DEDUP_REDIS_SEEN_FUNCTION_H_
#define URLSIEVE_DEDUP_REDIS_SEEN_FUNCTION_H_

#include <string>

namespace urlsieve {

inline constexpr const char* kRedisSeenLibrary = "urlsieve_v1";
inline constexpr const char* kRedisSeenCreate = "urlsieve_v1_create";
inline constexpr const char* kRedisSeenInit = "urlsieve_v1_init";
inline constexpr const char* kRedisSeenInsert = "urlsieve_v1_insert";
inline constexpr const char* kRedisSeenInsertRouted = "urlsieve_v1_insert_routed";
inline constexpr const char* kRedisSeenContains = "urlsieve_v1_contains";

// The library's source, for FUNCTION LOAD REPLACE.
const std::string& RedisSeenLibrarySource();

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_REDIS_SEEN_FUNCTION_H_
