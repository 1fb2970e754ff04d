// RedisSeenLayout: how a RedisSeenSet (redis_seen_set.h) lays its Bloom filter over Redis keys —
// the shard count, and for each layer of a shard its capacity, block count, bits per key and (exact
// mode) fingerprint bucket count — and where a key goes (its shard, and the 16-byte fingerprint the
// Redis Function derives its block, bits and bucket from). Computed once, by the process that
// creates the set, and stored in the set's keys; every other client reads it from there, so no two
// builds need to agree on floating-point sizing (docs/design.md, "The Redis seen set").
//
// Memory: each layer of a shard is one Redis string created at its full size. Redis allocates
// it with jemalloc, whose size classes are four per power of two, so a string of 2^20 bytes plus
// its header costs 1.25 MiB. The layer-0 string of a shard is sized to fill a size class exactly
// (every byte of the class holds blocks), and the shard count is chosen so that the classes waste
// least.
//
// Thread-safety: plain values and pure functions.
#ifndef URLSIEVE_DEDUP_REDIS_SEEN_LAYOUT_H_
#define URLSIEVE_DEDUP_REDIS_SEEN_LAYOUT_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/key_hash_value.h"

namespace urlsieve {

// One layer of one shard.
struct RedisBloomLayer {
  uint64_t capacity = 0;  // keys this shard's layer takes before the next layer is added
  uint64_t blocks = 0;    // 64-byte blocks (the string is blocks · 64 bytes), < 2^23
  uint32_t bits = 0;      // k: bits a key sets in its block
  uint64_t buckets = 0;   // exact mode: fingerprint hashes of this layer, < 2^21
  double fp_rate = 0;     // this layer's target ε (for Stats)

  friend bool operator==(const RedisBloomLayer&, const RedisBloomLayer&) = default;
};

struct RedisSeenLayout {
  uint32_t shards = 1;
  // layers[L]: layer L of every shard. Layers past the last one listed cannot be added (a string
  // would pass 512 MiB): the newest then keeps taking keys, above its capacity.
  std::vector<RedisBloomLayer> layers;

  // "capacity,blocks,bits,buckets,fp_rate;..." as the set stores it.
  std::string EncodeLayers() const;
  static Result<std::vector<RedisBloomLayer>> DecodeLayers(std::string_view text);
};

// The ScalableBloomFilter rule (scalable_bloom_filter.h): layer 0 takes ε·0.9, layer L ≥ 1 takes
// ε·0.1·0.5^L, and doubles the capacity.
double RedisLayerFpRate(double fp_rate, uint32_t layer);

// The layout of a new set of `capacity` keys at `fp_rate`; `shards` 0 chooses the count.
Result<RedisSeenLayout> ChooseRedisSeenLayout(uint64_t capacity, double fp_rate, uint32_t shards);

// The allocation jemalloc makes for `bytes` (its size classes: 8, 16, then multiples of 16 to 128,
// then four per power of two).
uint64_t JemallocSizeClass(uint64_t bytes);
// What a Redis string of `length` bytes allocates (its sds header and terminator included).
uint64_t RedisStringAllocation(uint64_t length);

// The shard of a key: multiply-high of hash.high by the shard count.
inline uint32_t RedisShardOf(const KeyHash& hash, uint32_t shards) {
  __extension__ typedef unsigned __int128 Uint128;
  return static_cast<uint32_t>((static_cast<Uint128>(hash.high) * shards) >> 64);
}

// The fingerprint the Redis Function receives: hash.high then hash.low, big-endian. It takes the
// bit positions from bytes 4-7 (of high), the block from bytes 8-11 (of low), the exact-mode bucket
// from bytes 12-15, and stores bytes 0-13 as the bucket's field.
std::array<char, 16> RedisFingerprint(const KeyHash& hash);

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_REDIS_SEEN_LAYOUT_H_
