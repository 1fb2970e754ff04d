#include "dedup/blocked_bloom_filter.h"

#include <sys/mman.h>

#include <array>
#include <atomic>
#include <bit>
#include <string>
#include <thread>

namespace urlsieve {
namespace {

__extension__ typedef unsigned __int128 Uint128;

// 64-bit multiply-high: maps a uniform 64-bit hash onto [0, n) without a division and without
// truncating to 32 bits, so layers larger than 2^32 bits are addressed uniformly.
inline uint64_t MulHigh(uint64_t hash, uint64_t n) {
  return static_cast<uint64_t>((static_cast<Uint128>(hash) * n) >> 64);
}

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

// Bit positions in [1, 511]: bit 0 is the block's lock.
inline LineMask MakeLineMask(uint64_t bits_hash, uint32_t first, uint32_t k) {
  LineMask mask{};
  for (uint32_t i = 0; i < k; ++i) {
    const uint64_t top = (bits_hash * kMultipliers[first + i]) >> 32;
    const uint32_t pos = 1 + static_cast<uint32_t>((top * kBloomUsableBlockBits) >> 32);
    mask[pos >> 6] |= uint64_t{1} << (pos & 63);
  }
  return mask;
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

// Sets the missing bits; returns whether any was missing.
inline bool SetMissing(uint64_t* block, const LineMask& mask) {
  bool changed = false;
  for (size_t w = 0; w < mask.size(); ++w) {
    if ((mask[w] & ~Load(block[w])) == 0) continue;
    std::atomic_ref<uint64_t>(block[w]).fetch_or(mask[w], std::memory_order_relaxed);
    changed = true;
  }
  return changed;
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

uint64_t BlockedBloomFilter::BlockIndex(const KeyHash& key) const {
  return MulHigh(key.low, layout_.num_blocks);
}

namespace {
// The second line's block: a remix of hash.low, so it is independent of the first block's index.
inline uint64_t SecondBlockHash(uint64_t low) {
  return (low ^ (low >> 29)) * 0xBF58476D1CE4E5B9ULL;
}
}  // namespace

void BlockedBloomFilter::PrefetchBlock(uint64_t block, bool for_write) const {
  const uint64_t* p = words_ + block * kWordsPerBlock;
  if (for_write) {
    __builtin_prefetch(p, 1, 3);
  } else {
    __builtin_prefetch(p, 0, 3);
  }
}

void BlockedBloomFilter::Prefetch(const KeyHash& key, bool for_write) const {
  PrefetchBlock(BlockIndex(key), for_write);
  if (layout_.lines_per_key == 2) {
    PrefetchBlock(MulHigh(SecondBlockHash(key.low), layout_.num_blocks), for_write);
  }
}

bool BlockedBloomFilter::MayContain(const KeyHash& key) const {
  const uint32_t k = layout_.bits_per_line;
  const uint64_t* first = words_ + BlockIndex(key) * kWordsPerBlock;
  if (Missing(first, MakeLineMask(key.high, 0, k)) != 0) return false;
  if (layout_.lines_per_key == 1) return true;
  const uint64_t* second =
      words_ + MulHigh(SecondBlockHash(key.low), layout_.num_blocks) * kWordsPerBlock;
  return Missing(second, MakeLineMask(key.high, k, k)) == 0;
}

bool BlockedBloomFilter::InsertUnlocked(const KeyHash& key) {
  const uint32_t k = layout_.bits_per_line;
  bool changed =
      SetMissing(words_ + BlockIndex(key) * kWordsPerBlock, MakeLineMask(key.high, 0, k));
  if (layout_.lines_per_key == 2) {
    uint64_t* second =
        words_ + MulHigh(SecondBlockHash(key.low), layout_.num_blocks) * kWordsPerBlock;
    changed |= SetMissing(second, MakeLineMask(key.high, k, k));
  }
  return changed;
}

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
  std::atomic_ref<uint64_t>(words_[block * kWordsPerBlock])
      .fetch_and(~uint64_t{1}, std::memory_order_release);
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
