// Where a key lives in a Redis seen set's layer (docs/features/redis-seen-set.md, "Layout"): the
// arithmetic that both the client (which sends the Function every offset) and the server module
// (which computes them from the hash) must do alike, so it is written once, here.
//  - Its block in a layer of `blocks` blocks: multiply-high of hash.low by `blocks`; its k bit
//    positions in the 512-bit block: the top 9 bits of hash.high · m_i, one odd multiplier m_i
//    per position (as bloom_line.h, over 512 bits: a Redis block has no lock bit).
//  - Exact mode: its field, the 14 bytes high ‖ the top 6 bytes of low (big-endian), and its
//    bucket among `buckets`: multiply-high of low rotated by 16 (so the 16 bits the field leaves
//    out pick the bucket first) by `buckets`.
//
// Header-only and free of the rest of the library: the module (dedup/redis/module/) is a shared
// object that Redis loads. Thread-safety: pure functions.
#ifndef URLSIEVE_DEDUP_REDIS_REDIS_SEEN_KEY_MATH_H_
#define URLSIEVE_DEDUP_REDIS_REDIS_SEEN_KEY_MATH_H_

#include <array>
#include <bit>
#include <cstdint>

namespace urlsieve {

inline constexpr uint32_t kRedisMaxBitsPerLayer = 48;
inline constexpr uint32_t kRedisKeyFieldBytes = 14;

namespace redis_seen_math_internal {
constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
}  // namespace redis_seen_math_internal

// One odd multiplier per bit position, as bloom_line.cc makes them.
inline constexpr auto kRedisBitMultipliers = [] {
  std::array<uint64_t, kRedisMaxBitsPerLayer> m{};
  for (size_t i = 0; i < m.size(); ++i) m[i] = redis_seen_math_internal::SplitMix64(i) | 1;
  return m;
}();

inline uint64_t RedisMultiplyHigh(uint64_t a, uint64_t b) {
  __extension__ typedef unsigned __int128 Uint128;
  return static_cast<uint64_t>((static_cast<Uint128>(a) * b) >> 64);
}

// The key's block (hash.low) among `blocks`.
inline uint64_t RedisBlockOf(uint64_t low, uint64_t blocks) {
  return RedisMultiplyHigh(low, blocks);
}
// Its position `bit` (< kRedisMaxBitsPerLayer) in the block, 0 .. 511 (hash.high).
inline uint32_t RedisPositionOf(uint64_t high, uint32_t bit) {
  return static_cast<uint32_t>((high * kRedisBitMultipliers[bit]) >> 55);
}
// Its exact-mode bucket among `buckets`.
inline uint64_t RedisBucketOfLow(uint64_t low, uint64_t buckets) {
  return RedisMultiplyHigh(std::rotr(low, 16), buckets);
}
// Its exact-mode field (kRedisKeyFieldBytes bytes at `out`).
inline void RedisKeyFieldBytes(uint64_t low, uint64_t high, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(high >> (56 - 8 * i));
  for (int i = 0; i < 6; ++i) out[8 + i] = static_cast<char>(low >> (56 - 8 * i));
}

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_REDIS_REDIS_SEEN_KEY_MATH_H_
