// RedisSeenSet: a SeenSet kept in Redis and shared by every thread, process and machine that opens
// it by the same address and name (docs/design.md, "The seen stage (SeenSet)"). Exactly one caller
// in the world is told "new" for a key.
//
// Layout (all keys start with "urlsieve:" and carry the set's name; S shards, each a Redis Cluster
// hash tag {NAME:s}, so a cluster spreads the shards over its masters and each shard's keys share a
// slot):
//   urlsieve:{NAME}:meta            hash: format, version, identity (32 hex), capacity, fp_rate,
//                                   exact, canonicalize (EncodeStoredCanonicalize), shards, the
//                                   layer parameters.
//   urlsieve:{NAME:s}:bloom:L       string: layer L of shard s, a blocked Bloom filter (all k bits
//                                   of a key in one 512-bit block), created at its full size.
//   urlsieve:{NAME:s}:count         inserts per layer of shard s; growth past a layer's capacity
//                                   adds a layer with a tighter ε, as ScalableBloomFilter does.
//   urlsieve:{NAME:s}:fp:L:B        exact mode: hashes bucketed by fingerprint prefix (listpack-
//                                   encoded), holding the rest of each key's 128-bit fingerprint.
//   urlsieve:{NAME:s}:claims:LOG    the claim log of a crawl (SeenSet::InsertHashedIfNewClaiming).
// A key's shard and its bits come from its 128-bit hash (KeyHash). Each shard's part of a batch is
// one call of a Redis Function (loaded by Open, FUNCTION LOAD): the test-and-set of the layers,
// the exact confirmation and the claim log together, atomically; the shards' calls are pipelined.
//
// Front cache: each process remembers (front_cache_keys of them, then it starts over) keys it
// knows are in the set, from its own inserts and Redis's answers, and answers those "seen" without
// a round trip. It is exact (128-bit fingerprints), so it adds no false positive; a "new" always
// comes from Redis.
//
// Faults: a Redis that is down, restarting, slow or answering an error makes a call return a
// non-OK Status (kUnavailable when a retry may cure it), never a verdict of "seen". Calls reconnect
// by themselves. A call whose reply was lost may have run: a retry of the same batch is answered
// as the first run was (the function records each batch's answers, keyed by the caller's
// id and batch number, for a few minutes), so no key is reported new twice or never.
// A Redis that loses acknowledged writes (a failover, a restart without AOF) forgets keys: they
// are reported new again and re-fetched, never lost. `appendonly yes` with `appendfsync always`
// (or `everysec`: at most a second of keys) bounds it.
//
// Thread-safety: every method may be called concurrently; each call uses a connection of its own
// from a pool.
#ifndef URLSIEVE_DEDUP_REDIS_SEEN_SET_H_
#define URLSIEVE_DEDUP_REDIS_SEEN_SET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "dedup/redis_address.h"
#include "dedup/redis_connection.h"
#include "dedup/seen_set.h"
#include "dedup/state_dir.h"

namespace urlsieve {

struct RedisSeenSetOptions {
  RedisAddress address;
  std::string name;           // 1-64 characters of [A-Za-z0-9_.-]
  StateParameters requested;  // for a new set; an existing one keeps its own (a notice says so)
  uint32_t shards = 0;        // 0: chosen from the capacity (a new set only)
  uint64_t front_cache_keys = uint64_t{1} << 22;  // 0: no front cache
  RedisTimeouts timeouts;
  // A crawl's claim log (see SeenSet::InsertHashedIfNewClaiming): its name (the crawl state's
  // identity), and the generation that state last committed. Empty: no claim log.
  std::string claim_log;
  uint64_t committed_generation = 0;
  bool read_only = false;  // `urlsieve stats --redis`: NotFound when there is no such set
};

// What a set costs in Redis (`urlsieve stats --redis`).
struct RedisSeenSetUsage {
  uint64_t bytes = 0;  // MEMORY USAGE of every key of the set
  uint64_t keys = 0;   // Redis keys
  uint64_t masters = 0;
};

class RedisSeenSet final : public SeenSet {
 public:
  // Opens or creates the set. Errors name the server and the set: kUnavailable (no server),
  // kFailedPrecondition (a wrong password, a peer that is not Redis, a name holding another type,
  // a Redis without Functions), kUnsupported / kCorruption (a metadata key of another version or
  // not ours); nothing is written then.
  static Result<std::unique_ptr<RedisSeenSet>> Open(const RedisSeenSetOptions& options,
                                                    std::vector<SeenNotice>* notices);
  ~RedisSeenSet() override;

  Status InsertHashedIfNew(std::span<const std::string_view> keys,
                           std::span<const KeyHash> hashes, std::span<bool> is_new) override;
  Status InsertHashedIfNewClaiming(std::span<const std::string_view> keys,
                                   std::span<const KeyHash> hashes,
                                   std::span<const std::string_view> payloads,
                                   std::span<bool> is_new) override;
  Result<std::vector<std::string>> UncommittedClaims() const override;
  Result<bool> ContainsHashed(std::string_view key, const KeyHash& hash) const override;
  SeenStats Stats() const override;
  StateIdentity identity() const override;
  // Redis has every insert already: Save does nothing. PrepareCheckpoint records nothing in `db`;
  // CheckpointCommitted drops the claim log's entries up to `generation`.
  Status Save() override;
  Status PrepareCheckpoint(SqliteDb& db, uint64_t generation) override;
  Status CheckpointCommitted(uint64_t generation) override;

  // The stored parameters.
  const StateParameters& parameters() const;
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
