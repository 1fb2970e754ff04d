// Shared helpers for the Bloom filter tests: reproducible pre-hashed keys.
#ifndef URLSIEVE_TESTS_DEDUP_BLOOM_TEST_UTIL_H_
#define URLSIEVE_TESTS_DEDUP_BLOOM_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <vector>

#include "dedup/key_hash.h"

namespace urlsieve {

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
