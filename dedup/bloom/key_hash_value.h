// KeyHash: the 128-bit digest of a canonical URL key (XXH3-128, seed 0), as the seen stage passes
// it around: the Bloom filter takes its block from `low` and its bit positions from `high`, the
// exact store keys its table by `low`, and a SeenSet (seen_set.h) receives it with each key.
//
// This header holds the plain value type only, so that public headers can name it without
// <xxhash.h>; the hash function itself is key_hash.h (internal) or SeenSet::Hash (public).
//
// Thread-safety: a plain value.
#ifndef URLSIEVE_DEDUP_BLOOM_KEY_HASH_VALUE_H_
#define URLSIEVE_DEDUP_BLOOM_KEY_HASH_VALUE_H_

#include <cstdint>

namespace urlsieve {

struct KeyHash {
  uint64_t low = 0;
  uint64_t high = 0;

  friend bool operator==(const KeyHash&, const KeyHash&) = default;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_KEY_HASH_VALUE_H_
