// BlockedBloomFilter: one fixed-size layer of the Bloom filter, with all of a key's bits in one
// 64-byte cache line (two lines for very small ε, see bloom_math.h).
//
// Addressing: the first block is multiply-high(hash.low, num_blocks), a 64-bit index, so a layer
// may exceed 2^32 bits; the bit positions inside a line come from hash.high (bloom_line.h).
//
// Thread-safety: every member may be called from many threads at once. A layer is written in one
// of two disciplines, never both:
//  - lock-free: InsertAtomic sets bits with relaxed fetch_or. Membership is correct, but two racing
//    inserts of one key can both report "new" (each sees a different bit still unset).
//  - locked: InsertLockedIf takes the spin lock in the key's first line (bloom_line.h) across one
//    test-and-set. With one line per key every write to a line then happens under its lock, so the
//    line is rewritten with plain stores instead of locked read-modify-writes and the lock released
//    with a release store: exactly one of several racing inserts of a key reports "new", and it is
//    cheaper than the lock-free discipline. (With two lines per key the second line is not covered
//    by the lock, so both lines use fetch_or.)
// Readers (MayContain, CountSetBits, words()) read without locks in either discipline; a reader
// racing with an insert of the same key may answer "absent", which linearizes it before the insert.
// layout, kernel and the mapping are immutable after construction.
#ifndef URLSIEVE_DEDUP_BLOOM_BLOCKED_BLOOM_FILTER_H_
#define URLSIEVE_DEDUP_BLOOM_BLOCKED_BLOOM_FILTER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "base/status.h"
#include "dedup/bloom/bloom_line.h"
#include "dedup/bloom/bloom_math.h"
#include "dedup/bloom/key_hash.h"

namespace urlsieve {
namespace bloom_internal {

__extension__ typedef unsigned __int128 Uint128;

// 64-bit multiply-high: maps a uniform 64-bit hash onto [0, n) without a division and without
// truncating to 32 bits, so layers larger than 2^32 bits are addressed uniformly.
inline uint64_t MulHigh(uint64_t hash, uint64_t n) {
  return static_cast<uint64_t>((static_cast<Uint128>(hash) * n) >> 64);
}

}  // namespace bloom_internal

class BlockedBloomFilter {
 public:
  static constexpr size_t kWordsPerBlock = kBloomWordsPerLine;

  // Allocates a zeroed, 64-byte (in practice page- or huge-page-) aligned bit array.
  // InvalidArgument for a layout out of range or a kernel this CPU cannot run.
  static Result<std::unique_ptr<BlockedBloomFilter>> Create(
      const BloomLayout& layout, BloomLineKernel kernel = ActiveBloomLineKernel());

  BlockedBloomFilter(const BlockedBloomFilter&) = delete;
  BlockedBloomFilter& operator=(const BlockedBloomFilter&) = delete;
  ~BlockedBloomFilter();

  const BloomLayout& layout() const { return layout_; }
  BloomLineKernel kernel() const { return kernel_; }
  uint64_t bytes() const { return layout_.bytes(); }

  // The key's first line: where its lock lives, and what to prefetch. Inline: the hot path.
  uint64_t* LineOf(const KeyHash& key) const {
    return words_ + bloom_internal::MulHigh(key.low, layout_.num_blocks) * kWordsPerBlock;
  }
  static void PrefetchLine(const uint64_t* line) { __builtin_prefetch(line, 1, 3); }
  // Both lines of the key.
  void Prefetch(const KeyHash& key) const;

  // Lock-free membership test.
  bool MayContain(const KeyHash& key) const;

  // The lock-free discipline: true if any of the key's bits was unset (the key was absent), after
  // setting them.
  bool InsertAtomic(const KeyHash& key);

  // The locked discipline: takes the key's lock and, if `guard` (read under the lock) equals
  // `expected`, test-and-sets the key and releases the lock (kNew: the key was absent). Otherwise
  // returns kGuardChanged with nothing written and the lock held, for the caller to finish and
  // then call UnlockKey. Inline, and asks for the line before anything else: a prefetch is
  // not ordered behind the previous call's locked instructions, so back-to-back inserts overlap
  // their cache misses instead of queueing them.
  LockedSet InsertLockedIf(const KeyHash& key, const std::atomic<uint32_t>& guard,
                           uint32_t expected) {
    uint64_t* line = LineOf(key);
    PrefetchLine(line);
    if (layout_.lines_per_key == 1) {
      return LockedSetLine(kernel_, line, key.high, layout_.bits_per_line, guard, expected);
    }
    return InsertTwoLinesIf(key, line, guard, expected);
  }
  void UnlockKey(const KeyHash& key) { UnlockBloomLine(LineOf(key), layout_.lines_per_key == 1); }

  // Number of key bits set (lock bits excluded), for the fill ratio. Reads the whole array.
  uint64_t CountSetBits() const;

  // The raw words, for snapshots. Read with atomic_ref while other threads may write; the lock bits
  // (bit 0 of each block's first word) are not part of the data.
  std::span<uint64_t> words() { return {words_, layout_.num_blocks * kWordsPerBlock}; }
  std::span<const uint64_t> words() const { return {words_, layout_.num_blocks * kWordsPerBlock}; }

 private:
  BlockedBloomFilter(const BloomLayout& layout, BloomLineKernel kernel, uint64_t* words,
                     size_t mapped_bytes);
  uint64_t* SecondLineOf(const KeyHash& key) const;
  // The key's bits in its first (`line` 0) or second (1) line: positions line·k .. line·k+k−1.
  BloomLineMask MaskOf(const KeyHash& key, uint32_t line) const;
  LockedSet InsertTwoLinesIf(const KeyHash& key, uint64_t* line, const std::atomic<uint32_t>& guard,
                             uint32_t expected);

  BloomLayout layout_;
  BloomLineKernel kernel_;
  uint64_t* words_;
  size_t mapped_bytes_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_BLOCKED_BLOOM_FILTER_H_
