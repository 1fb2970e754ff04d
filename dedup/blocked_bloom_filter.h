// BlockedBloomFilter: one fixed-size layer of the Bloom filter, with all of a key's bits in one
// 64-byte cache line (two lines for very small ε, see bloom_math.h).
//
// Addressing: the first block is multiply-high(hash.low, num_blocks), a 64-bit index, so a layer
// may exceed 2^32 bits; the bit positions inside a line come from hash.high, each one the top bits
// of hash.high times a distinct odd constant (independent multiplies, no chain), scaled to [1,
// 511].
//
// Thread-safety: every member may be called from many threads at once.
//  - The bit array is only ever touched through std::atomic_ref: readers use relaxed loads, writers
//    relaxed fetch_or. A reader racing with an insert of the same key may see some of its bits and
//    answer "absent"; the insert has not completed yet, so that is a correct linearization.
//  - Bit 0 of each block is that block's spin lock (acquire fetch_or / release fetch_and), held
//  only
//    across one key's test-and-set. ScalableBloomFilter locks the key's first block in its oldest
//    layer to make "exactly one caller is told new" hold (invariant 5). A layer on its own never
//    takes a lock: InsertUnlocked is the lock-free set, correct for membership but not for
//    exactly-one-new (two threads can each see a different bit still unset).
//  - layout, num_blocks, the memory mapping: immutable after construction.
#ifndef URLSIEVE_DEDUP_BLOCKED_BLOOM_FILTER_H_
#define URLSIEVE_DEDUP_BLOCKED_BLOOM_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "dedup/bloom_math.h"
#include "dedup/key_hash.h"
#include "dedup/status.h"

namespace urlsieve {

class BlockedBloomFilter {
 public:
  static constexpr size_t kWordsPerBlock = kBloomBlockBits / 64;

  // Allocates a zeroed, 64-byte (in practice page- or huge-page-) aligned bit array.
  static Result<std::unique_ptr<BlockedBloomFilter>> Create(const BloomLayout& layout);

  BlockedBloomFilter(const BlockedBloomFilter&) = delete;
  BlockedBloomFilter& operator=(const BlockedBloomFilter&) = delete;
  ~BlockedBloomFilter();

  const BloomLayout& layout() const { return layout_; }
  uint64_t bytes() const { return layout_.bytes(); }

  // The key's first block: where its lock lives, and what to prefetch.
  uint64_t BlockIndex(const KeyHash& key) const;
  void Prefetch(const KeyHash& key, bool for_write) const;
  void PrefetchBlock(uint64_t block, bool for_write) const;

  // Lock-free membership test.
  bool MayContain(const KeyHash& key) const;
  // Sets the key's bits; returns true if any of them was unset before (the key was absent).
  bool InsertUnlocked(const KeyHash& key);

  // The spin lock in bit 0 of `block`.
  void LockBlock(uint64_t block);
  void UnlockBlock(uint64_t block);

  // Number of key bits set (lock bits excluded), for the fill ratio. Reads the whole array.
  uint64_t CountSetBits() const;

  // The raw words, for snapshots. Read with atomic_ref while other threads may write; the lock bits
  // (bit 0 of each block's first word) are not part of the data.
  std::span<uint64_t> words() { return {words_, layout_.num_blocks * kWordsPerBlock}; }
  std::span<const uint64_t> words() const { return {words_, layout_.num_blocks * kWordsPerBlock}; }

 private:
  BlockedBloomFilter(const BloomLayout& layout, uint64_t* words, size_t mapped_bytes);

  BloomLayout layout_;
  uint64_t* words_;
  size_t mapped_bytes_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOCKED_BLOOM_FILTER_H_
