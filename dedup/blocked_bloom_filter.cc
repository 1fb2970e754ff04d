#include "dedup/blocked_bloom_filter.h"

#include <sys/mman.h>

#include <array>
#include <atomic>
#include <bit>
#include <string>
#include <thread>

namespace urlsieve {
namespace {

using bloom_internal::MulHigh;

constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// One odd multiplier per bit position. Positions are top bits of hash.high · kMultipliers[i]: each
// is an independent multiply (no dependency chain), and unlike double hashing (h1 + i·h2) in a
// 511-slot line, no key gets a degenerate stride that piles its bits onto a few positions.
constexpr auto kMultipliers = [] {
  std::array<uint64_t, 2 * kBloomMaxBitsPerLine> m{};
  for (size_t i = 0; i < m.size(); ++i) m[i] = SplitMix64(i) | 1;
  return m;
}();

using LineMask = std::array<uint64_t, BlockedBloomFilter::kWordsPerBlock>;

// Bit `i` of a line: a position in [1, 511] (bit 0 is the block's lock).
inline void AddBit(uint64_t bits_hash, uint32_t i, LineMask& mask) {
  const uint64_t pos = 1 + MulHigh(bits_hash * kMultipliers[i], kBloomUsableBlockBits);
  mask[pos >> 6] |= uint64_t{1} << (pos & 63);
}

inline LineMask MakeLineMask(uint64_t bits_hash, uint32_t first, uint32_t k) {
  LineMask mask{};
  for (uint32_t i = 0; i < k; ++i) AddBit(bits_hash, first + i, mask);
  return mask;
}

// With k a constant the loop unrolls, with immediate multipliers.
template <uint32_t kBits>
inline LineMask MakeLineMask(uint64_t bits_hash) {
  LineMask mask{};
#pragma GCC unroll 16
  for (uint32_t i = 0; i < kBits; ++i) AddBit(bits_hash, i, mask);
  return mask;
}

// The first line's mask, with k made a constant for the values ChooseBloomLayout picks for ε from
// 1e-1 to 1e-5 (one line): building the mask is most of an in-cache insert's instructions.
inline LineMask FirstLineMask(uint64_t bits_hash, uint32_t k) {
  switch (k) {
#define URLSIEVE_CONST_K(n) \
  case n:                   \
    return MakeLineMask<n>(bits_hash);
    URLSIEVE_CONST_K(4)
    URLSIEVE_CONST_K(5)
    URLSIEVE_CONST_K(6)
    URLSIEVE_CONST_K(7)
    URLSIEVE_CONST_K(8)
    URLSIEVE_CONST_K(9)
    URLSIEVE_CONST_K(10)
    URLSIEVE_CONST_K(11)
    URLSIEVE_CONST_K(12)
    URLSIEVE_CONST_K(13)
    URLSIEVE_CONST_K(14)
#undef URLSIEVE_CONST_K
    default:
      return MakeLineMask(bits_hash, 0, k);
  }
}

inline uint64_t Load(const uint64_t& word) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(word)).load(std::memory_order_relaxed);
}

// Bits of `mask` not yet set in the block.
inline uint64_t Missing(const uint64_t* block, const LineMask& mask) {
  uint64_t missing = 0;
  for (size_t w = 0; w < mask.size(); ++w) missing |= mask[w] & ~Load(block[w]);
  return missing;
}

// Sets the missing bits; returns whether any was missing. `kOwned`: the caller is the block's only
// writer (it holds the block's lock in the locked discipline), so a plain store cannot lose a
// concurrent writer's bits and the locked read-modify-write is not needed.
template <bool kOwned>
inline bool SetMissing(uint64_t* block, const LineMask& mask) {
  uint64_t missing = 0;
  for (size_t w = 0; w < mask.size(); ++w) {
    const uint64_t old = Load(block[w]);
    missing |= mask[w] & ~old;
    std::atomic_ref<uint64_t> word(block[w]);
    if constexpr (kOwned) {
      // Unconditional and branch-free: the line is already exclusive (the lock was just taken in
      // it), so rewriting an unchanged word costs nothing, while a data-dependent branch per word
      // would mispredict about half the time.
      word.store(old | mask[w], std::memory_order_relaxed);
    } else if ((mask[w] & ~old) != 0) {
      word.fetch_or(mask[w], std::memory_order_relaxed);
    }
  }
  return missing != 0;
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;

}  // namespace

Result<std::unique_ptr<BlockedBloomFilter>> BlockedBloomFilter::Create(const BloomLayout& layout) {
  if (layout.num_blocks == 0 || layout.bits_per_line == 0 ||
      layout.bits_per_line > kBloomMaxBitsPerLine || layout.lines_per_key < 1 ||
      layout.lines_per_key > 2 || layout.num_blocks > (uint64_t{1} << 52)) {
    return Status::InvalidArgument("bloom layout out of range");
  }
  const size_t bytes = layout.bytes();
  const size_t align = bytes >= kHugePage ? kHugePage : kPage;
  const size_t mapped = (bytes + align - 1) / align * align;
  // An anonymous mapping is zeroed lazily by the kernel, so a large layer costs nothing until used.
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return Status::IoError("cannot map " + std::to_string(mapped) + " bytes");
#ifdef MADV_HUGEPAGE
  // Random probes over hundreds of MB would otherwise miss the TLB on almost every access.
  if (align == kHugePage) madvise(p, mapped, MADV_HUGEPAGE);
#endif
  return std::unique_ptr<BlockedBloomFilter>(
      new BlockedBloomFilter(layout, static_cast<uint64_t*>(p), mapped));
}

BlockedBloomFilter::BlockedBloomFilter(const BloomLayout& layout, uint64_t* words,
                                       size_t mapped_bytes)
    : layout_(layout), words_(words), mapped_bytes_(mapped_bytes) {}

BlockedBloomFilter::~BlockedBloomFilter() { munmap(words_, mapped_bytes_); }

namespace {
// The second line's block: a remix of hash.low, so it is independent of the first block's index.
inline uint64_t SecondBlockHash(uint64_t low) {
  return (low ^ (low >> 29)) * 0xBF58476D1CE4E5B9ULL;
}
}  // namespace

void BlockedBloomFilter::Prefetch(const KeyHash& key, bool for_write) const {
  PrefetchBlock(BlockIndex(key), for_write);
  if (layout_.lines_per_key == 2) {
    PrefetchBlock(MulHigh(SecondBlockHash(key.low), layout_.num_blocks), for_write);
  }
}

bool BlockedBloomFilter::MayContain(const KeyHash& key) const {
  const uint32_t k = layout_.bits_per_line;
  const uint64_t* first = words_ + BlockIndex(key) * kWordsPerBlock;
  if (Missing(first, FirstLineMask(key.high, k)) != 0) return false;
  if (layout_.lines_per_key == 1) return true;
  const uint64_t* second =
      words_ + MulHigh(SecondBlockHash(key.low), layout_.num_blocks) * kWordsPerBlock;
  return Missing(second, MakeLineMask(key.high, k, k)) == 0;
}

template <bool kOwned>
bool BlockedBloomFilter::Insert(const KeyHash& key) {
  const uint32_t k = layout_.bits_per_line;
  uint64_t* first = words_ + BlockIndex(key) * kWordsPerBlock;
  if (layout_.lines_per_key == 1) return SetMissing<kOwned>(first, FirstLineMask(key.high, k));
  uint64_t* second =
      words_ + MulHigh(SecondBlockHash(key.low), layout_.num_blocks) * kWordsPerBlock;
  // Two lines: a block is written by keys whose lock is elsewhere, so always read-modify-write.
  const bool changed = SetMissing<false>(first, FirstLineMask(key.high, k));
  return SetMissing<false>(second, MakeLineMask(key.high, k, k)) || changed;
}

bool BlockedBloomFilter::InsertAtomic(const KeyHash& key) { return Insert<false>(key); }
bool BlockedBloomFilter::InsertLocked(const KeyHash& key) { return Insert<true>(key); }

void BlockedBloomFilter::LockBlock(uint64_t block) {
  std::atomic_ref<uint64_t> word(words_[block * kWordsPerBlock]);
  for (int spins = 0; word.fetch_or(1, std::memory_order_acquire) & 1;) {
    // Wait with plain loads so the line stays shared until the holder releases it. The lock is
    // held for a few nanoseconds; yield only in case the holder was descheduled.
    while (word.load(std::memory_order_relaxed) & 1) {
      if (++spins < 128) {
        CpuRelax();
      } else {
        std::this_thread::yield();
      }
    }
  }
}

void BlockedBloomFilter::UnlockBlock(uint64_t block) {
  std::atomic_ref<uint64_t> word(words_[block * kWordsPerBlock]);
  if (layout_.lines_per_key == 1) {
    // Nobody else writes this word while we hold the lock (waiters' failed fetch_or rewrite the
    // same value), so a release store is enough.
    word.store(word.load(std::memory_order_relaxed) & ~uint64_t{1}, std::memory_order_release);
  } else {
    word.fetch_and(~uint64_t{1}, std::memory_order_release);
  }
}

uint64_t BlockedBloomFilter::CountSetBits() const {
  uint64_t count = 0;
  const size_t n = layout_.num_blocks * kWordsPerBlock;
  for (size_t i = 0; i < n; ++i) {
    uint64_t w = Load(words_[i]);
    if (i % kWordsPerBlock == 0) w &= ~uint64_t{1};
    count += static_cast<uint64_t>(std::popcount(w));
  }
  return count;
}

}  // namespace urlsieve
