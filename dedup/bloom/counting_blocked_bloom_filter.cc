#include "dedup/bloom/counting_blocked_bloom_filter.h"

#include <sys/mman.h>

#include <atomic>
#include <bit>
#include <string>

#include "dedup/bloom/blocked_bloom_filter.h"

namespace urlsieve {
namespace {

using bloom_internal::MulHigh;

constexpr uint64_t kNibbleLows = 0x1111111111111111ULL;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;

// The low bit of each counter of `word` that is zero / saturated.
inline uint64_t ZeroNibbles(uint64_t w) {
  return ~(w | (w >> 1) | (w >> 2) | (w >> 3)) & kNibbleLows;
}
inline uint64_t FullNibbles(uint64_t w) { return w & (w >> 1) & (w >> 2) & (w >> 3) & kNibbleLows; }

inline uint64_t Load(const uint64_t& word) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(word)).load(std::memory_order_relaxed);
}

}  // namespace

Result<std::unique_ptr<CountingBlockedBloomFilter>> CountingBlockedBloomFilter::Create(
    const BloomLayout& layout) {
  if (layout.num_blocks == 0 || layout.bits_per_line == 0 ||
      layout.bits_per_line > kBloomMaxBitsPerLine || layout.lines_per_key < 1 ||
      layout.lines_per_key > 2 || layout.num_blocks > (uint64_t{1} << 50)) {
    return Status::InvalidArgument("counting bloom layout out of range");
  }
  const size_t bytes = BytesOf(layout);
  const size_t align = bytes >= kHugePage ? kHugePage : kPage;
  const size_t mapped = (bytes + align - 1) / align * align;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return Status::IoError("cannot map " + std::to_string(mapped) + " bytes");
#ifdef MADV_HUGEPAGE
  if (align == kHugePage) madvise(p, mapped, MADV_HUGEPAGE);
#endif
  return std::unique_ptr<CountingBlockedBloomFilter>(
      new CountingBlockedBloomFilter(layout, static_cast<uint64_t*>(p), mapped));
}

CountingBlockedBloomFilter::CountingBlockedBloomFilter(const BloomLayout& layout, uint64_t* words,
                                                       size_t mapped_bytes)
    : layout_(layout),
      kernel_(ActiveBloomLineKernel()),
      words_(words),
      mapped_bytes_(mapped_bytes) {}

CountingBlockedBloomFilter::~CountingBlockedBloomFilter() { munmap(words_, mapped_bytes_); }

uint64_t* CountingBlockedBloomFilter::BlockOf(const KeyHash& key, uint32_t line) const {
  uint64_t h = key.low;
  // The second line: the same remix of hash.low as BlockedBloomFilter::SecondLineOf.
  if (line == 1) h = (key.low ^ (key.low >> 29)) * 0xBF58476D1CE4E5B9ULL;
  return words_ + MulHigh(h, layout_.num_blocks) * kWordsPerBlock;
}

BloomLineMask CountingBlockedBloomFilter::MaskOf(const KeyHash& key, uint32_t line) const {
  const uint32_t k = layout_.bits_per_line;
  return BuildBloomLineMask(kernel_, key.high, line * k, k);
}

void CountingBlockedBloomFilter::Prefetch(const KeyHash& key) const {
  for (uint32_t line = 0; line < layout_.lines_per_key; ++line) {
    const char* block = reinterpret_cast<const char*>(BlockOf(key, line));
    for (int i = 0; i < 4; ++i) __builtin_prefetch(block + 64 * i, 1, 3);
  }
}

// Each loop below visits the key's positions (the set bits of its mask, k per line): counter p
// of a block is bits 4·(p mod 16) .. +3 of the block's word p / 16.
bool CountingBlockedBloomFilter::MayContain(const KeyHash& key) const {
  for (uint32_t line = 0; line < layout_.lines_per_key; ++line) {
    const uint64_t* block = BlockOf(key, line);
    const BloomLineMask mask = MaskOf(key, line);
    for (size_t w = 0; w < kBloomWordsPerLine; ++w) {
      for (uint64_t bits = mask.words[w]; bits != 0; bits &= bits - 1) {
        const uint32_t p = static_cast<uint32_t>(64 * w) + std::countr_zero(bits);
        if (((Load(block[p / 16]) >> (4 * (p % 16))) & 15) == 0) return false;
      }
    }
  }
  return true;
}

void CountingBlockedBloomFilter::LockKey(const KeyHash& key) {
  uint64_t* first = BlockOf(key, 0);
  if (layout_.lines_per_key == 1) return LockBloomLine(first);
  uint64_t* second = BlockOf(key, 1);
  if (second == first) return LockBloomLine(first);
  LockBloomLine(first < second ? first : second);
  LockBloomLine(first < second ? second : first);
}

void CountingBlockedBloomFilter::UnlockKey(const KeyHash& key) {
  // Every writer of a block's first word holds its lock: a release store frees it.
  uint64_t* first = BlockOf(key, 0);
  UnlockBloomLine(first, /*exclusive_word=*/true);
  if (layout_.lines_per_key == 2) {
    uint64_t* second = BlockOf(key, 1);
    if (second != first) UnlockBloomLine(second, /*exclusive_word=*/true);
  }
}

bool CountingBlockedBloomFilter::Add(const KeyHash& key) {
  bool absent = false;
  for (uint32_t line = 0; line < layout_.lines_per_key; ++line) {
    uint64_t* block = BlockOf(key, line);
    const BloomLineMask mask = MaskOf(key, line);
    for (size_t w = 0; w < kBloomWordsPerLine; ++w) {
      for (uint64_t bits = mask.words[w]; bits != 0; bits &= bits - 1) {
        const uint32_t p = static_cast<uint32_t>(64 * w) + std::countr_zero(bits);
        std::atomic_ref<uint64_t> word(block[p / 16]);
        const uint64_t old = word.load(std::memory_order_relaxed);
        const uint32_t shift = 4 * (p % 16);
        const uint64_t count = (old >> shift) & 15;
        absent |= count == 0;
        if (count != kMaxCount) word.store(old + (uint64_t{1} << shift), std::memory_order_relaxed);
      }
    }
  }
  return absent;
}

bool CountingBlockedBloomFilter::Remove(const KeyHash& key) {
  if (!MayContain(key)) return false;
  for (uint32_t line = 0; line < layout_.lines_per_key; ++line) {
    uint64_t* block = BlockOf(key, line);
    const BloomLineMask mask = MaskOf(key, line);
    for (size_t w = 0; w < kBloomWordsPerLine; ++w) {
      for (uint64_t bits = mask.words[w]; bits != 0; bits &= bits - 1) {
        const uint32_t p = static_cast<uint32_t>(64 * w) + std::countr_zero(bits);
        std::atomic_ref<uint64_t> word(block[p / 16]);
        const uint64_t old = word.load(std::memory_order_relaxed);
        const uint32_t shift = 4 * (p % 16);
        const uint64_t count = (old >> shift) & 15;
        // Saturated counters stay; none is zero (the key was present, under the lock).
        if (count != kMaxCount && count != 0) {
          word.store(old - (uint64_t{1} << shift), std::memory_order_relaxed);
        }
      }
    }
  }
  return true;
}

uint64_t CountingBlockedBloomFilter::CountNonZero() const {
  uint64_t count = 0;
  const size_t n = layout_.num_blocks * kWordsPerBlock;
  for (size_t i = 0; i < n; ++i) {
    uint64_t present = ~ZeroNibbles(Load(words_[i])) & kNibbleLows;
    if (i % kWordsPerBlock == 0) present &= ~uint64_t{1};
    count += static_cast<uint64_t>(std::popcount(present));
  }
  return count;
}

uint64_t CountingBlockedBloomFilter::CountSaturated() const {
  uint64_t count = 0;
  const size_t n = layout_.num_blocks * kWordsPerBlock;
  for (size_t i = 0; i < n; ++i)
    count += static_cast<uint64_t>(std::popcount(FullNibbles(Load(words_[i]))));
  return count;
}

}  // namespace urlsieve
