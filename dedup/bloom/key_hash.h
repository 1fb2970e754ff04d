// HashKey: the 128-bit XXH3 digest of a canonical URL key (KeyHash, key_hash_value.h), computed
// once per URL and shared by the Bloom filter (which takes its block from `low` and its bit
// positions from `high`) and the exact store (which keys its table by the same digest). Inline, for
// the hot paths inside the library; internal, because it includes <xxhash.h> (public code calls
// SeenSet::Hash, seen_set.h, which is the same function).
//
// Thread-safety: HashKey is a pure function.
#ifndef URLSIEVE_DEDUP_BLOOM_KEY_HASH_H_
#define URLSIEVE_DEDUP_BLOOM_KEY_HASH_H_

#include <xxhash.h>

#include <cstdint>
#include <string_view>

#include "dedup/bloom/key_hash_value.h"

namespace urlsieve {

// XXH3-128 with seed 0. Snapshots record this choice as hash id "xxh3-128": changing it would make
// every stored filter answer wrongly, so it must never change silently.
inline KeyHash HashKey(std::string_view canonical_key) {
  XXH128_hash_t h = XXH3_128bits(canonical_key.data(), canonical_key.size());
  return KeyHash{h.low64, h.high64};
}

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_KEY_HASH_H_
