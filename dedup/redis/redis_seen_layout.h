// RedisSeenLayout: how a RedisSeenSet (redis_seen_set.h) lays its Bloom filter over Redis keys —
// the shard count, and for each layer of a shard its capacity, block count, bits per key and (exact
// mode) fingerprint bucket count — and where a key goes (its shard, and the 16-byte fingerprint the
// Redis Function derives its block, bits and bucket from). Computed once, by the process that
// creates the set, and stored in the set's keys; every other client reads it from there, so no two
// builds need to agree on floating-point sizing (docs/features/redis-seen-set.md, "The Redis seen
// set").
//
// Memory: each layer of a shard is one Redis string created at its full size. Redis allocates
// it with jemalloc, whose size classes are four per power of two, so a string of 2^20 bytes plus
// its header costs 1.25 MiB. The layer-0 string of a shard is sized to fill a size class exactly
// (every byte of the class holds blocks), and the shard count is chosen so that the classes waste
// least.
//
// Thread-safety: plain values and pure functions.
#ifndef URLSIEVE_DEDUP_REDIS_REDIS_SEEN_LAYOUT_H_
#define URLSIEVE_DEDUP_REDIS_REDIS_SEEN_LAYOUT_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/bloom/key_hash_value.h"

namespace urlsieve {

// One layer of one shard.
struct RedisBloomLayer {
  uint64_t capacity = 0;  // keys this shard's layer takes before the next layer is added
  uint64_t blocks = 0;    // 64-byte blocks (the string is blocks · 64 bytes), < 2^23
  uint32_t bits = 0;      // k: bits a key sets in its block
  uint64_t buckets = 0;   // exact mode: fingerprint hashes of this layer, < 2^21
  double fp_rate = 0;     // this layer's target ε (not stored: RedisLayerFpRate of the set's ε)

  friend bool operator==(const RedisBloomLayer&, const RedisBloomLayer&) = default;
};

struct RedisSeenLayout {
  uint32_t shards = 1;
  // layers[L]: layer L of every shard. Layers past the last one listed cannot be added (a string
  // would pass 512 MiB): the newest then keeps taking keys, above its capacity.
  std::vector<RedisBloomLayer> layers;

  // "capacity,blocks,bits,buckets;..." as the set stores it.
  std::string EncodeLayers() const;
  static Result<std::vector<RedisBloomLayer>> DecodeLayers(std::string_view text);
};

// The ScalableBloomFilter rule (scalable_bloom_filter.h): layer 0 takes ε·0.9, layer L ≥ 1 takes
// ε·0.1·0.5^L, and doubles the capacity.
double RedisLayerFpRate(double fp_rate, uint32_t layer);

// The layout of a new set of `capacity` keys at `fp_rate`; `shards` 0 chooses the count: as few
// as the 512 MiB string limit allows with room to grow (each layer-0 string at most 16 MiB), and
// at least `spread` once the filter passes 1 MiB. Shards help a Redis Cluster spread a set over
// its masters; on one server each extra shard splits a batch into more, smaller calls, so a
// standalone server takes spread 1 and a cluster 4 per master (RedisSeenSet chooses it from the
// deployment when it creates the set). Past 4 MiB the count also fits the strings to jemalloc's
// size classes (a set of 10^6 keys at 1e-3 gets 1 shard on one server, 10^7 keys 19: 1.99 B/key
// of filter instead of 2.10 in 2).
//
// `min_shard_keys`: the least a shard's first layer takes; layer L takes 2^(L · growth_shift)
// times the first's keys (1: doubling, the ScalableBloomFilter rule). A routed set
// (redis_seen_set.h) passes kRoutedMinShardKeys and kRoutedGrowthShift: its shards are a crawl
// cluster's partitions (1024 by default), each holding whole hosts, so their loads are skewed
// (most partitions small, a big host's large: one partition may hold all of a site's URLs) and
// capacity / shards can be below one key. Every key of a batch is tested against each of its
// shard's layers, so a skewed shard should reach its size in few layers: quadrupling takes half
// as many as doubling (a shard of 64 times its share: 4 layers instead of 7), for at most 4
// times the filter bytes its keys need instead of 2; and the floor spares a small crawl's shards
// the tiny first layers.
Result<RedisSeenLayout> ChooseRedisSeenLayout(uint64_t capacity, double fp_rate, uint32_t shards,
                                              uint32_t spread = 1, uint64_t min_shard_keys = 0,
                                              uint32_t growth_shift = 1);

// A routed shard's first layer takes at least this many keys: at ε = 1e-3 a string of about
// 8 KiB, so 1024 shards start at about 8 MiB. Its layers quadruple.
inline constexpr uint64_t kRoutedMinShardKeys = 4096;
inline constexpr uint32_t kRoutedGrowthShift = 2;

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

// What the Redis Function receives of a key (redis_seen_function.h): the client computes every
// offset, so the function never computes with Lua's doubles.
//  - Its block in layer l: multiply-high of hash.low by the layer's block count; its k bit
//    positions in the 512-bit block: the top 9 bits of hash.high · m_i, one odd multiplier m_i
//    per position (as bloom_line.h, over 512 bits: a Redis block has no lock bit). Sent as the
//    absolute bit offsets block · 512 + position.
//  - Exact mode: its field, the 14 bytes high ‖ the top 6 bytes of low (big-endian), and its
//    bucket in layer l: multiply-high of low rotated by 16 (so the 16 bits the field leaves out
//    pick the bucket first) by the layer's bucket count.
std::string RedisKeyField(const KeyHash& hash);
uint64_t RedisBucketOf(const KeyHash& hash, uint64_t buckets);
uint64_t RedisBitOffset(const KeyHash& hash, const RedisBloomLayer& layer, uint32_t bit);

// Appends a key's arguments for `provided` layers: [field (exact)] [payload (non-null)] and per
// layer [bucket (exact)] and its bit offsets. A deletable set's filter holds a 4-bit counter per
// position instead of a bit (`counter_bits` 4): its offsets are the positions times 4.
void AppendRedisKeyArguments(const KeyHash& hash, std::span<const RedisBloomLayer> layers,
                             uint32_t provided, bool exact, const std::string_view* payload,
                             std::vector<std::string>* argv, uint32_t counter_bits = 1);

// A counting layer's string is 4 times as long: its blocks stay below this (BITFIELD offsets
// below 2^32 bits, strings below 512 MiB).
inline constexpr uint64_t kMaxCountingLayerBlocks = (uint64_t{1} << 21) - 1;

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_REDIS_REDIS_SEEN_LAYOUT_H_
