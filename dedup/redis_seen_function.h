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
//                        generation, then per key its 16-byte fingerprint (RedisFingerprint) and,
//                        with a claim log, its payload. Returns one character per key, '1' new.
//   urlsieve_v1_contains KEYS: count. ARGV: exact, fingerprints. '1' per contained key. No writes.
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
inline constexpr const char* kRedisSeenContains = "urlsieve_v1_contains";

// The library's source, for FUNCTION LOAD REPLACE.
const std::string& RedisSeenLibrarySource();

// The bit multipliers the library uses (exposed for tests): position b of a key whose position
// word is p (26 bits of hash.high) is ((p · multiplier[b]) mod 2^26) >> 17, in [0, 511].
inline constexpr int kRedisSeenMaxBits = 48;
unsigned RedisSeenBitMultiplier(int b);

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_REDIS_SEEN_FUNCTION_H_
