// RedisSeenSet: a SeenSet kept in Redis and shared by every thread, process and machine that opens
// it by the same address and name (docs/features/redis-seen-set.md, "The Redis seen set"). Exactly
// one caller in the world is told "new" for a key.
//
// Layout (all keys start with "urlsieve:" and carry the set's name; S shards, each a Redis Cluster
// hash tag {NAME:s}, so a cluster spreads the shards over its masters and each shard's keys share a
// slot; redis_seen_layout.h computes it when the set is created; S is small on a standalone
// server, where shards only split a batch into more calls (past 4 MiB chosen to fit jemalloc's
// size classes), and at least 4 per master on a cluster):
//   urlsieve:{NAME}:meta            hash: format, version, identity (32 hex), capacity, fp_rate,
//                                   exact, canonicalize (EncodeStoredCanonicalize), shards, the
//                                   layer table (per layer: capacity, blocks, bits, buckets),
//                                   routed = 1 (a routed set only; absent: not routed).
//   urlsieve:{NAME:s}:count         hash: the shard's identity, layer table, layers, the newest
//                                   layer's count, n<L> (the count of each full layer), and the
//                                   exact-mode counters maybe / fp.
//   urlsieve:{NAME:s}:bloom:L       string: layer L of shard s, a blocked Bloom filter (all k bits
//                                   of a key in one 512-bit block), created at its full size, which
//                                   fills a jemalloc size class.
//   urlsieve:{NAME:s}:fp:L:B        exact mode: hashes bucketed by fingerprint (about 64 entries
//                                   per bucket at the layer's capacity, so they stay listpack-
//                                   encoded), field = 14 bytes of the key's 128-bit hash, no value.
//   urlsieve:{NAME:s}:claims:LOG    list: the claim log of a crawl, "<generation> <payload>".
//   urlsieve:{NAME:s}:<suffix>      routed mode: the caller's stream (RedisNewKeyStream; a crawl
//                                   cluster's inbox), one entry {c: payload} per key told new, its
//                                   consumer group made with it, at the shard's first new key.
//   urlsieve:{NAME:s}:done:TOKEN    string, 300 s: the last answer of one pooled connection
//                                   ("<seq>|<verdicts>"), for retries (below).
//   urlsieve:{NAME:s}:gen:G         a generational set (revisit_after) instead of layers: the
//                                   filter of generation G (unix ms / span), one geometry for all,
//                                   made at full size by the first insert that needs it, expiring
//                                   by itself when G ages out (PX); :gen:G:fp:B its exact buckets.
//   urlsieve:{NAME}:forgets         string: the forgetting epoch, INCR by every Forget, read by
//                                   front caches of sets that can forget (below).
// A deletable set's strings hold a 4-bit saturating counter per position (BITFIELD u4, OVERFLOW
// SAT) instead of a bit: 4 times the bytes. Sets with generations or counters are meta version
// 2, which earlier builds refuse; others stay version 1.
//
// Generations (docs/features/redis-seen-set.md, "The Redis seen set"): revisit_after T, G
// generations of span L = T/G; generation index floor(t / L). The live ones are the current one and
// the G before it; a key held by any is seen (nothing written), any other goes into the current one
// and is new. So a key told new at t is seen until between t+T and t+T+L. Each generation is sized
// for capacity/G keys at ε/(G+1), so the union over the G+1 live ones stays ≤ ε (a generation past
// its capacity takes further keys, its ε rising). t is the server's TIME, read inside the
// Function, so all clients agree (on a Cluster each shard's master's clock: a key lives in one
// shard); with RedisSeenSetOptions::clock, the client's clock, sent with each call: then a client
// whose clock is off by d puts keys into a generation others consider d older or newer, so they
// come back new up to d early or late, and a generation's keys expire (PX, counted from the call)
// up to d early or late; keep client clocks within a small part of L. (The Function also tests
// the G generations after the caller's current one, so a client behind still sees what a client
// ahead inserted: skew never makes a key new twice.)
//
// Forgetting (ForgetHashed): exact mode deletes the key's record from every layer's (or live
// generation's) bucket; a deletable set decrements its counters in the layer or generation it was
// inserted into (the oldest holding it), never a saturated one, so forgetting gives no false
// negative. Forgetting a key never inserted that the filter holds falsely (probability ε)
// decrements other keys' counters: that can make them new again. A plain set is Unsupported,
// naming exact mode and --deletable. After the deletions the forgetting epoch is bumped, and a
// front cache over a set that can forget reads the epoch before each batch (one more round trip
// per batch), so no process answers a forgotten key "seen" from its cache.
// A key's shard and its bits come from its 128-bit hash (KeyHash): the shard from hash.high's top
// bits, the block from hash.low, the bit positions from hash.high. Each shard's part of a batch is
// one call of a Redis Function (redis_seen_function.h; loaded by Open with FUNCTION LOAD REPLACE,
// and again when a server answers "Function not found"): the test-and-set of the layers
// (BITFIELD), growth, the exact confirmation (HSETNX) and the claim log together, atomically; the
// shards' calls go in one pipeline. The client computes every offset; the function only moves
// them into BITFIELD and decides.
//
// Growth: when a shard's newest layer holds its capacity and a key new to it arrives, the function
// adds a layer (a batch of repeats adds none) with twice the capacity and a tighter ε (the
// ScalableBloomFilter rule: ε0 = 0.9ε, ε_L = 0.1ε·0.5^L). A key is seen if any layer holds it,
// and inserted only into the newest. The layer table is fixed when
// the set is created (up to the layer whose string would pass 512 MiB; past it the last layer
// takes every further key, above its capacity). A routed set's layers quadruple instead, from a
// first layer of at least 4096 keys (redis_seen_layout.h): its shards are partitions of hosts,
// as skewed as the crawl's hosts.
//
// Front cache: each process remembers (front_cache_keys of them, in two generations) keys it
// knows are in the set, from its own inserts and Redis's answers, and answers those "seen" without
// a round trip (redis_front_cache.h). It is exact (whole 128-bit hashes), so it adds no false
// positive; a "new" always comes from Redis.
//
// Faults: a Redis that is down, restarting, slow or answering an error makes a call return a
// non-OK Status (kUnavailable when a retry may cure it), never a verdict of "seen". Calls reconnect
// by themselves. A call whose reply was lost may have run. So that a retry is answered as the
// first run was, the function keeps each pooled connection's last answer per shard under its
// token and batch number for 300 s; the set retries a failed shard call itself (same token and
// number; back-off 25, 100, 300, 500 ms), and when it still fails returns kUnavailable and keeps
// the batch (its shard parts, token and number, by a digest of its hashes) for 240 s: the caller's
// retry of the same keys goes out the same way, and no key is reported new twice or never. A
// caller must retry a failed batch unchanged within those 4 minutes (filter and crawl retry until
// it succeeds).
// A Redis that loses acknowledged writes (a failover, a restart without AOF) forgets keys: they
// are reported new again and re-fetched, never lost. `appendonly yes` with `appendfsync always`
// (or `everysec`: at most a second of keys) bounds it.
//
// Thread-safety: every method may be called concurrently; each call uses a connection of its own
// from a pool (a mutex guards the pool; a connection serves one call at a time), the front cache
// locks one of its 64 shards at a time, and the counters are atomics.
#ifndef URLSIEVE_DEDUP_REDIS_SEEN_SET_H_
#define URLSIEVE_DEDUP_REDIS_SEEN_SET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "dedup/seen_filter.h"
#include "dedup/state_dir.h"
#include "dedup/state_seen_set.h"
#include "redis/redis_address.h"
#include "redis/redis_connection.h"

namespace urlsieve {

// Where a routed set appends each new key's payload: per shard s, the stream
// RedisShardKeyPrefix(name, s) + suffix (so it shares the shard's slot), with the consumer group
// `group`, created with the stream (reading from id 0). The names are the caller's: a crawl
// cluster's inboxes (crawler/cluster/cluster_keys.h).
struct RedisNewKeyStream {
  std::string suffix;  // e.g. "inbox"
  std::string group;
};

struct RedisSeenSetOptions {
  RedisAddress address;
  std::string name;           // 1-64 characters of [A-Za-z0-9_.-]
  StateParameters requested;  // for a new set; an existing one keeps its own (a notice says so)
  uint32_t shards = 0;        // 0: chosen from the capacity (a new set only)
  // 0: no front cache. It costs up to ~32 bytes of this process's memory per remembered key.
  uint64_t front_cache_keys = kDefaultRedisFrontCacheKeys;
  RedisTimeouts timeouts;
  // A crawl's claim log (see StateSeenSet::InsertHashedIfNewClaiming): its name (the crawl state's
  // identity), and the generation that state last committed. Empty: no claim log.
  // UncommittedClaims returns the payloads of entries above committed_generation; inserts are
  // logged at committed_generation + 1, and at g + 1 after CheckpointCommitted(g).
  std::string claim_log;
  uint64_t committed_generation = 0;
  bool read_only = false;  // `urlsieve stats --redis`: NotFound when there is no such set
  // Routed mode, for a crawl cluster (docs/features/cluster.md, "The crawl cluster"): the set has
  // exactly `shards` shards (required; an existing set must have been created routed with as many,
  // else FailedPrecondition naming both), the caller names each key's shard (InsertRouted: the
  // cluster's partition of the URL's host), and with each key told new its payload is appended,
  // in the same atomic Function call, to that shard's stream `new_key_stream` (one field "c" =
  // the payload; its consumer group is created with the stream, reading from id 0; required when
  // routed, InvalidArgument without). So a key can never be seen and not queued. A routed set has
  // no claim log (claim_log must be empty); InsertHashedIfNew / InsertHashedIfNewClaiming on it are
  // InvalidArgument, and so is InsertRouted on a set that is not routed. The meta hash records
  // "routed" = 1; opening a routed set unrouted, or the reverse, is FailedPrecondition. A
  // read-only open takes the set as stored. ContainsHashed on a routed set is InvalidArgument
  // (the key's shard is the caller's to name). The streams are the caller's: the set creates
  // and appends to them, never reads, trims or deletes them (Usage counts them apart; a read-only
  // open without new_key_stream leaves them out).
  bool routed = false;
  RedisNewKeyStream new_key_stream;
  // Time and forgetting (docs/features/redis-seen-set.md, "The Redis seen set", "Generations" and
  // "Forgetting"): requested.revisit_after_s / generations make a generational set,
  // requested.deletable a counting one; both stored in the meta, an existing set keeps its own.
  // `clock` (null: none) makes the client's clock (its WallNow) the time of the generations instead
  // of the server's TIME; tests pass a ManualClock. Must outlive the set. A routed set takes
  // neither (InvalidArgument).
  const Clock* clock = nullptr;
  // A set that lost data (docs/features/redis-seen-set.md, "A set that lost data": a key
  // deleted, evicted or overwritten, a server restarted without it) is kCorruption naming the
  // server and the key, at open and at every call, and nothing is answered "new". With
  // accept_loss, an open repairs it instead, each repair a notice (kLossAccepted): a lost shard or
  // filter string is made again, empty (the keys it held are new again); a set whose metadata was
  // lost while its shards remain is deleted and created again (a new identity). Calls after the
  // open never repair.
  bool accept_loss = false;
  // Inserts go to the urlsieve server module (URLSIEVE.INSERT, docs/features/redis-seen-set.md,
  // "The server module") when every master has loaded it and the set is layered, of bits and not
  // routed; otherwise, or false here, to the Function. Both keep the same keys and answers.
  bool server_module = true;
};

// The prefix of every key of shard `shard` of the set `name`: "urlsieve:{NAME:s}:", whose Redis
// Cluster hash tag is "{NAME:s}". A crawl cluster keeps a partition's own keys (its lease) under
// it, so that they share the shard's slot and one Function may touch them together.
std::string RedisShardKeyPrefix(std::string_view name, uint32_t shard);

// What a set costs in Redis (`urlsieve stats --redis`). bytes and keys are the set's own (its
// filter, buckets, counters, claim log); a routed set's inbox streams, the crawl cluster's work
// queue, are counted apart (inbox_*), and so are not in bytes or keys.
struct RedisSeenSetUsage {
  uint64_t bytes = 0;  // MEMORY USAGE of every key of the set
  uint64_t keys = 0;   // Redis keys
  uint64_t masters = 0;
  uint64_t inbox_streams = 0;  // routed: inbox streams that exist
  uint64_t inbox_entries = 0;  // routed: XLEN summed (entries not yet trimmed, pending or not)
  uint64_t inbox_bytes = 0;    // routed: MEMORY USAGE of the inboxes
};

class RedisSeenSet final : public StateSeenSet {
 public:
  // Opens or creates the set. Errors name the server and the set: kUnavailable (no server),
  // kFailedPrecondition (a wrong password, a peer that is not Redis, a name holding another type,
  // a Redis without Functions), kUnsupported / kCorruption (a metadata key of another version or
  // not ours); nothing is written then.
  static Result<std::unique_ptr<RedisSeenSet>> Open(const RedisSeenSetOptions& options,
                                                    std::vector<SeenNotice>* notices);
  ~RedisSeenSet() override;

  Status InsertHashedIfNew(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
                           std::span<bool> is_new) override;
  Status InsertHashedIfNewClaiming(std::span<const std::string_view> keys,
                                   std::span<const KeyHash> hashes,
                                   std::span<const std::string_view> payloads,
                                   std::span<bool> is_new) override;
  // Routed mode (RedisSeenSetOptions::routed): tests and inserts keys[i] (hash hashes[i]) in
  // shard shards[i] (< the set's shard count, else InvalidArgument) and, for each key told new,
  // appends payloads[i] to that shard's inbox in the same Function call. Faults and retries as
  // for InsertHashedIfNewClaiming: a batch retried unchanged within 4 minutes is answered as its
  // first run was, and appends nothing twice.
  Status InsertRouted(std::span<const uint32_t> shards, std::span<const std::string_view> keys,
                      std::span<const KeyHash> hashes, std::span<const std::string_view> payloads,
                      std::span<bool> is_new);
  Result<std::vector<std::string>> UncommittedClaims() const override;
  Result<bool> ContainsHashed(std::string_view key, const KeyHash& hash) const override;
  // Exact or deletable sets (see Forgetting above); Unsupported for a plain one, InvalidArgument
  // for a routed one (ForgetRouted). A call that returns an error may have forgotten some keys:
  // retried unchanged within 4 minutes it is answered as its first run was (and decrements nothing
  // twice).
  Status ForgetHashed(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
                      std::span<bool> forgotten) override;
  // Deletes every key of the set (its metadata, shards, layers, buckets and claim logs, not a
  // routed set's inboxes, which are its owner's): `urlsieve cluster delete`. The set cannot be
  // used after. Returns how many keys there were.
  Result<uint64_t> DeleteAll();
  // Routed mode: ForgetHashed with each key's shard named, as InsertRouted names it.
  Status ForgetRouted(std::span<const uint32_t> shards, std::span<const std::string_view> keys,
                      std::span<const KeyHash> hashes, std::span<bool> forgotten);
  // Reads every shard's counters and BITCOUNTs every layer (O(filter bytes) inside Redis). When
  // Redis cannot answer, only the stored parameters are filled in.
  SeenStats Stats() const override;
  StateIdentity identity() const override;
  // Redis has every insert already: Save does nothing (FailedPrecondition for a crawl's set, one
  // with a claim log). PrepareCheckpoint records nothing in `db`; CheckpointCommitted drops the
  // claim log's entries up to `generation` (all of them: the owner keeps inserts out meanwhile).
  Status Save() override;
  Status PrepareCheckpoint(SqliteDb& db, uint64_t generation) override;
  Status CheckpointCommitted(uint64_t generation) override;

  // The stored parameters.
  const StateParameters& parameters() const;
  // MEMORY USAGE of every key of the set (not the transient done:TOKEN answers), one pipeline of
  // up to 1000 keys at a time: O(keys), not for a hot loop. A routed set's inboxes apart (XLEN and
  // MEMORY USAGE of each: inbox_*).
  Result<RedisSeenSetUsage> Usage() const;

  // Round trips and keys sent to Redis by this process so far (bench/redis_seen.sh).
  uint64_t round_trips() const;
  uint64_t keys_sent() const;

 private:
  class Impl;
  explicit RedisSeenSet(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_REDIS_SEEN_SET_H_
