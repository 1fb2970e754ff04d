// Shared helpers for the Bloom filter tests: reproducible pre-hashed keys.
#ifndef URLSIEVE_TESTS_DEDUP_BLOOM_TEST_UTIL_H_
#define URLSIEVE_TESTS_DEDUP_BLOOM_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <vector>

#include "dedup/bloom/key_hash.h"

namespace urlsieve {

// Sanitizer builds skip the statistical measurements (tens of millions of lookups, minutes under
// TSan); the same code paths are exercised by the other tests, and the statistics are unchanged.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
#else
inline constexpr bool kSanitizerBuild = false;
#endif

// `count` random 128-bit keys from `seed`; distinct seeds give (with overwhelming probability)
// disjoint key sets, which is how the tests make keys that were never inserted.
inline std::vector<KeyHash> RandomKeys(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<KeyHash> keys(count);
  for (KeyHash& k : keys) k = KeyHash{rng(), rng()};
  return keys;
}

}  // namespace urlsieve

#endif  // URLSIEVE_TESTS_DEDUP_BLOOM_TEST_UTIL_H_
