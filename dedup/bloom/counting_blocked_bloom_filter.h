// CountingBlockedBloomFilter: one fixed-size layer of the counting Bloom filter
// (docs/features/forgetting.md, "Forgetting"): BlockedBloomFilter (blocked_bloom_filter.h) with a
// 4-bit counter in place of each bit, so that a key can be removed.
//
// Layout: the same blocks, the same block address (multiply-high of hash.low, the remix for a
// second line) and the same positions inside a block (BuildBloomLineMask, bloom_line.h) as the
// plain layer: position p of a block is counter p, bits 4·(p mod 16) .. +3 of the block's word
// p / 16. A counter is non-zero exactly where the plain filter's bit would be set (while nothing
// is removed), so the false-positive rate at a layout and load is the plain filter's. A block is
// 512 counters, 256 bytes (four cache lines): 4x the memory of the plain layer.
//
// Counters saturate: a counter at 15 is never incremented nor decremented again. A saturated
// counter may hold more keys than it can count, and decrementing it could make one of them
// absent (a false negative); kept at 15, it only leaves the key's other counters to forget it.
// Remove is for a key the caller believes present: removing a key that was never added (a false
// positive) decrements other keys' counters. Counter 0 of each block is never used (position 0
// is the plain layer's lock bit): bit 0 of a block's first word is the block's spin lock, as in
// the plain layer (bloom_line.h).
//
// Thread-safety: the locked discipline of the plain layer. Every write to a block happens under
// its lock: LockKey takes the key's block locks (one, or two in address order), and Add and
// Remove, called with them held, rewrite the counter words with plain (relaxed atomic) loads and
// stores. MayContain, CountNonZero, CountSaturated and words() read without locks (relaxed
// loads): a reader racing with a write may see a word before or after it. A single-threaded
// caller (a test) may call Add and Remove without the locks.
#ifndef URLSIEVE_DEDUP_BLOOM_COUNTING_BLOCKED_BLOOM_FILTER_H_
#define URLSIEVE_DEDUP_BLOOM_COUNTING_BLOCKED_BLOOM_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "base/status.h"
#include "dedup/bloom/bloom_line.h"
#include "dedup/bloom/bloom_math.h"
#include "dedup/bloom/key_hash.h"

namespace urlsieve {

class CountingBlockedBloomFilter {
 public:
  static constexpr uint32_t kCounterBits = 4;
  static constexpr uint32_t kMaxCount = 15;  // saturated
  static constexpr size_t kWordsPerBlock = kBloomBlockBits * kCounterBits / 64;  // 32

  // The bytes of a layer with `layout`: 4x BloomLayout::bytes().
  static uint64_t BytesOf(const BloomLayout& layout) {
    return layout.num_blocks * kWordsPerBlock * sizeof(uint64_t);
  }

  // Zeroed counters. InvalidArgument for a layout out of range; IoError if memory cannot be
  // mapped.
  static Result<std::unique_ptr<CountingBlockedBloomFilter>> Create(const BloomLayout& layout);

  CountingBlockedBloomFilter(const CountingBlockedBloomFilter&) = delete;
  CountingBlockedBloomFilter& operator=(const CountingBlockedBloomFilter&) = delete;
  ~CountingBlockedBloomFilter();

  const BloomLayout& layout() const { return layout_; }
  uint64_t bytes() const { return BytesOf(layout_); }

  void Prefetch(const KeyHash& key) const;
  // The key's block locks (bit 0 of each block's first word), taken in address order.
  void LockKey(const KeyHash& key);
  void UnlockKey(const KeyHash& key);
  // Every counter of the key is non-zero.
  bool MayContain(const KeyHash& key) const;
  // Increments the key's counters (saturated ones stay at 15). True if one of them was zero: the
  // key was absent. The caller holds the key's locks.
  bool Add(const KeyHash& key);
  // Decrements the key's counters that are neither zero nor saturated. True if the key was
  // present (every counter non-zero) before. The caller holds the key's locks.
  bool Remove(const KeyHash& key);

  // Counters that are non-zero / saturated (counter 0 of each block excluded). Reads everything.
  uint64_t CountNonZero() const;
  uint64_t CountSaturated() const;

  // The raw counter words, for snapshots (read with atomic_ref while other threads may write).
  std::span<uint64_t> words() { return {words_, layout_.num_blocks * kWordsPerBlock}; }
  std::span<const uint64_t> words() const { return {words_, layout_.num_blocks * kWordsPerBlock}; }

 private:
  CountingBlockedBloomFilter(const BloomLayout& layout, uint64_t* words, size_t mapped_bytes);
  uint64_t* BlockOf(const KeyHash& key, uint32_t line) const;
  BloomLineMask MaskOf(const KeyHash& key, uint32_t line) const;

  const BloomLayout layout_;
  const BloomLineKernel kernel_;
  uint64_t* const words_;
  const size_t mapped_bytes_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_COUNTING_BLOCKED_BLOOM_FILTER_H_
