// The Redis Function library of RedisSeenSet (redis_seen_set.h): its Lua source, loaded by
// FUNCTION LOAD REPLACE when a set opens (and again when a server answers "Function not found",
// e.g. after a restart without persistence or a FUNCTION FLUSH). Each function runs atomically on
// the keys of one shard (one Redis Cluster slot, the hash tag {NAME:s}):
//   urlsieve_v2_create   KEYS: meta. ARGV: field, value, ... Creates the metadata hash unless it
//                        exists; returns the stored one (HGETALL).
//   urlsieve_v2_init     KEYS: the shard's count hash. ARGV: layer table, identity. Creates the
//                        shard (its state and its layer-0 string, at full size) unless it exists;
//                        an existing shard of another identity is an error.
//   urlsieve_v2_check    KEYS: the shard's count hash. ARGV: identity, repair (0/1). An existing
//                        set's shard at open: NOINIT when it is missing, IDENTITY when it is
//                        another set's, LOST when a layer string lost data (with repair 1: made
//                        again, empty, and named in the reply "REPAIRED <key>...").
//   urlsieve_v2_insert   KEYS: count. ARGV: exact (0/1), token ("<identity>/..." is checked
//                        against the shard's: IDENTITY when the set was made again), seq, claim log
//                        ("" none), generation, P, then per key its arguments (RedisKeyArguments).
//                        Returns [one character per key, '1' new; the shard's layers; its newest
//                        count].
//   urlsieve_v2_insert_routed  KEYS: count, the shard's inbox stream. ARGV: exact, token, seq,
//                        group, P, then per key its arguments (with its payload). Routed mode:
//                        insert's test-and-set, then XADD <inbox> * c <payload> per new key (the
//                        stream and its consumer group created first when the stream is absent).
//                        The same reply as insert.
//   urlsieve_v2_contains KEYS: count. ARGV: exact, P, per key its arguments (no payload). The
//                        same reply, '1' per contained key. No writes.
//   urlsieve_v2_forget   KEYS: count. ARGV: exact, token, seq, P, per key its arguments (no
//                        payload). Exact: HDEL of its record in every layer; deletable (the
//                        shard's unit 4): its counters decremented in the oldest layer holding
//                        it, saturated ones kept. Reply as insert's, '1' per key forgotten.
//   urlsieve_v2_insert_gen  KEYS: count of a generational shard (the live generations, and any
//                        of the G after the caller's current one, are tested; the current one
//                        takes the new keys). ARGV: exact, token, seq, claim
//                        log, generation, now (unix ms; "" = the server's TIME), then per key
//                        [field] [payload] [bucket] offsets (one geometry: every generation's).
//                        Reply ["<now> <cur> <per key '1' new, else 'A' + the age of the
//                        generation holding it>", 1, the current generation's count].
//   urlsieve_v2_contains_gen KEYS: count. ARGV: exact, now, keys. '1' per key held. No writes.
//   urlsieve_v2_forget_gen   KEYS: count. ARGV: exact, token, seq, now, keys. As forget, over
//                        the live generations.
// init's optional ARGV[3] is the unit (1 bits, 4 counters), ARGV[4..5] a generational shard's
// span (ms) and generation count; they go into the shard's count hash.
// Every call that reads a shard checks what it reads first: a layer or live generation string
// missing or not of its full size, or a shard state that is not readable, is an error reply
// "LOST urlsieve: <key> ..." and nothing is written.
// Compatibility: a newer build adds functions or optional arguments, never changes what an
// existing one means, so an older binary's calls keep working after a newer one's FUNCTION LOAD
// REPLACE.
// The source is redis_seen_function.lua, embedded at build time (cmake/EmbedFile.cmake); it
// describes the algorithm (docs/features/redis-seen-set.md, "The Redis seen set").
//
// Thread-safety: constants.
#ifndef URLSIEVE_DEDUP_REDIS_REDIS_SEEN_FUNCTION_H_
#define URLSIEVE_DEDUP_REDIS_REDIS_SEEN_FUNCTION_H_

#include <string>

namespace urlsieve {

inline constexpr const char* kRedisSeenLibrary = "urlsieve_v2";
inline constexpr const char* kRedisSeenCreate = "urlsieve_v2_create";
inline constexpr const char* kRedisSeenInit = "urlsieve_v2_init";
inline constexpr const char* kRedisSeenCheck = "urlsieve_v2_check";
inline constexpr const char* kRedisSeenInsert = "urlsieve_v2_insert";
inline constexpr const char* kRedisSeenInsertRouted = "urlsieve_v2_insert_routed";
inline constexpr const char* kRedisSeenContains = "urlsieve_v2_contains";
inline constexpr const char* kRedisSeenForget = "urlsieve_v2_forget";
inline constexpr const char* kRedisSeenInsertGen = "urlsieve_v2_insert_gen";
inline constexpr const char* kRedisSeenContainsGen = "urlsieve_v2_contains_gen";
inline constexpr const char* kRedisSeenForgetGen = "urlsieve_v2_forget_gen";
// The server module's insert (dedup/redis/module/urlsieve_module.cc), where every master loaded it:
//   URLSIEVE.INSERT <count> <exact> <token> <seq> <claim log> <generation> <hashes> [payloads]
// <hashes> 16 bytes a key (low, high, little-endian); answers as kRedisSeenInsert.
inline constexpr const char* kRedisSeenModuleInsert = "URLSIEVE.INSERT";
//   URLSIEVE.INSERT_ROUTED <count> <inbox> <exact> <token> <seq> <group> <hashes> <payloads>
// answers as kRedisSeenInsertRouted.
inline constexpr const char* kRedisSeenModuleInsertRouted = "URLSIEVE.INSERT_ROUTED";

// The library's source (redis_seen_function.lua, byte for byte), for FUNCTION LOAD REPLACE.
const std::string& RedisSeenLibrarySource();

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_REDIS_REDIS_SEEN_FUNCTION_H_
