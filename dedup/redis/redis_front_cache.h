// RedisFrontCache: the keys one process knows are in a RedisSeenSet (its own "new" answers and
// Redis's "seen" ones), so that a repeat is answered "seen" without a round trip
// (docs/features/redis-seen-set.md, "The Redis seen set"). Exact: it holds whole 128-bit KeyHashes,
// so it adds no false positive. Bounded: two generations of at most max_keys/2 keys each; when the
// current one is full it becomes the previous one and the older is dropped (a forgotten key just
// goes to Redis again).
//
// Time and forgetting: a cache over a set with revisit_after is `timed`: each key carries the
// moment (in the set's time line, milliseconds) until which Redis is known to hold it, and is not
// answered after it, so a key whose generation aged out goes to Redis again. A set that can forget
// keeps a forgetting epoch in Redis, bumped by every Forget: an entry counts only under the epoch
// it was learned in (Validate clears the cache when the epoch moved; Insert drops an entry of an
// older epoch), so no other process's forgotten key is answered "seen".
//
// Memory: open-addressing tables of 16-byte slots (24 when timed) at most 3/4 full, so about
// 22-43 bytes per remembered key (max_keys 2^20, the default: at most ~32 MiB, reached only once
// that many keys were seen).
//
// Thread-safety: all members may be called concurrently. The hashes are spread over 64 shards by
// their top bits, each a mutex and its two tables; a call holds one shard's mutex at a time. The
// epoch is an atomic; Validate sets it before clearing the shards, and Insert compares it under
// the shard's mutex, so an entry learned under an older epoch never survives a Validate.
#ifndef URLSIEVE_DEDUP_REDIS_REDIS_FRONT_CACHE_H_
#define URLSIEVE_DEDUP_REDIS_REDIS_FRONT_CACHE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "dedup/bloom/key_hash_value.h"

namespace urlsieve {

class RedisFrontCache {
 public:
  static constexpr uint64_t kForever = UINT64_MAX;

  explicit RedisFrontCache(uint64_t max_keys, bool timed = false);
  RedisFrontCache(const RedisFrontCache&) = delete;
  RedisFrontCache& operator=(const RedisFrontCache&) = delete;

  // Whether the key is remembered, and (timed) still held at `now`.
  bool Contains(const KeyHash& hash, uint64_t now = 0) const;
  // Remembers the key, held until `until` (timed; a later `until` extends an entry), learned
  // under forgetting epoch `epoch`: dropped when the cache's epoch has moved on since.
  void Insert(const KeyHash& hash, uint64_t until = kForever, uint64_t epoch = 0);
  // The forgetting epoch Redis answered: when it differs from the cache's, every entry goes.
  void Validate(uint64_t epoch);
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }
  // Keys remembered now (both generations).
  uint64_t size() const;

 private:
  // Linear probing over a power-of-two table; the all-zero hash is kept aside (it marks empty
  // slots). A timed table keeps each slot's `until` in a parallel vector.
  class Table {
   public:
    explicit Table(bool timed = false) : timed_(timed) {}
    // The key's `until` (kForever untimed), or 0 when absent.
    uint64_t Find(const KeyHash& hash) const;
    void Insert(const KeyHash& hash, uint64_t until);  // an existing key's until is extended
    uint64_t size() const { return size_; }

   private:
    void Grow();
    bool timed_;
    std::vector<KeyHash> slots_;
    std::vector<uint64_t> until_;  // timed only
    uint64_t size_ = 0;
    bool has_zero_ = false;
    uint64_t zero_until_ = 0;
  };
  struct Shard {
    mutable std::mutex mu;
    Table current;
    Table previous;
  };
  static constexpr int kShardBits = 6;

  Shard& ShardOf(const KeyHash& hash) const { return shards_[hash.high >> (64 - kShardBits)]; }

  uint64_t per_generation_;  // per shard
  bool timed_;
  std::atomic<uint64_t> epoch_{0};
  mutable std::array<Shard, 1 << kShardBits> shards_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_REDIS_REDIS_FRONT_CACHE_H_
