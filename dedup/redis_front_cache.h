// RedisFrontCache: the keys one process knows are in a RedisSeenSet (its own "new" answers and
// Redis's "seen" ones), so that a repeat is answered "seen" without a round trip
// (docs/design.md, "The Redis seen set"). Exact: it holds whole 128-bit KeyHashes, so it adds no
// false positive. Bounded: two generations of at most max_keys/2 keys each; when the current one
// is full it becomes the previous one and the older is dropped (a forgotten key just goes to
// Redis again).
//
// Memory: open-addressing tables of 16-byte slots at most 3/4 full, so about 22-43 bytes per
// remembered key (max_keys 2^22: at most ~128 MiB, reached only once that many keys were seen).
//
// Thread-safety: all members may be called concurrently. The hashes are spread over 64 shards by
// their top bits, each a mutex and its two tables; a call holds one shard's mutex at a time.
#ifndef URLSIEVE_DEDUP_REDIS_FRONT_CACHE_H_
#define URLSIEVE_DEDUP_REDIS_FRONT_CACHE_H_

#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

#include "dedup/key_hash_value.h"

namespace urlsieve {

class RedisFrontCache {
 public:
  explicit RedisFrontCache(uint64_t max_keys);
  RedisFrontCache(const RedisFrontCache&) = delete;
  RedisFrontCache& operator=(const RedisFrontCache&) = delete;

  bool Contains(const KeyHash& hash) const;
  void Insert(const KeyHash& hash);
  // Keys remembered now (both generations).
  uint64_t size() const;

 private:
  // Linear probing over a power-of-two table; the all-zero hash is kept aside (it marks empty
  // slots).
  class Table {
   public:
    bool Contains(const KeyHash& hash) const;
    void Insert(const KeyHash& hash);  // the caller checked it is absent
    uint64_t size() const { return size_; }

   private:
    void Grow();
    std::vector<KeyHash> slots_;
    uint64_t size_ = 0;
    bool has_zero_ = false;
  };
  struct Shard {
    mutable std::mutex mu;
    Table current;
    Table previous;
  };
  static constexpr int kShardBits = 6;

  Shard& ShardOf(const KeyHash& hash) const { return shards_[hash.high >> (64 - kShardBits)]; }

  uint64_t per_generation_;  // per shard
  mutable std::array<Shard, 1 << kShardBits> shards_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_REDIS_FRONT_CACHE_H_
