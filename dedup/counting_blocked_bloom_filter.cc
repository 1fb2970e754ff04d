#include "dedup/counting_blocked_bloom_filter.h"

#include <sys/mman.h>

#include <atomic>
#include <bit>
#include <string>

#include "dedup/blocked_bloom_filter.h"

namespace urlsieve {
namespace {

using bloom_internal::MulHigh;

constexpr uint64_t kNibbleLows = 0x1111111111111111ULL;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;

// Bit i of the 16-bit `bits` moved to bit 4·i: the low bit of counter i in its word.
inline uint64_t SpreadToNibbles(uint64_t bits) {
  uint64_t x = bits & 0xFFFF;
  x = (x | (x << 24)) & 0x000000FF000000FFULL;
  x = (x | (x << 12)) & 0x000F000F000F000FULL;
  x = (x | (x << 6)) & 0x0303030303030303ULL;
  x = (x | (x << 3)) & kNibbleLows;
  return x;
}

// The low bit of each counter of `word` that is zero / saturated.
inline uint64_t ZeroNibbles(uint64_t w) { return ~(w | (w >> 1) | (w >> 2) | (w >> 3)) & kNibbleLows; }
inline uint64_t FullNibbles(uint64_t w) { return w & (w >> 1) & (w >> 2) & (w >> 3) & kNibbleLows; }

inline uint64_t Load(const uint64_t& word) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(word)).load(std::memory_order_relaxed);
}

// The key's counters in counter word j (of 32) of a block: their low bits.
inline uint64_t OnesIn(const BloomLineMask& mask, size_t j) {
  return SpreadToNibbles(mask.words[j / 4] >> (16 * (j % 4)));
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

bool CountingBlockedBloomFilter::MayContain(const KeyHash& key) const {
  for (uint32_t line = 0; line < layout_.lines_per_key; ++line) {
    const uint64_t* block = BlockOf(key, line);
    const BloomLineMask mask = MaskOf(key, line);
    for (size_t j = 0; j < kWordsPerBlock; ++j) {
      const uint64_t ones = OnesIn(mask, j);
      if (ones != 0 && (ZeroNibbles(Load(block[j])) & ones) != 0) return false;
    }
  }
  return true;
}

bool CountingBlockedBloomFilter::Add(const KeyHash& key) {
  bool absent = false;
  for (uint32_t line = 0; line < layout_.lines_per_key; ++line) {
    uint64_t* block = BlockOf(key, line);
    const BloomLineMask mask = MaskOf(key, line);
    for (size_t j = 0; j < kWordsPerBlock; ++j) {
      const uint64_t ones = OnesIn(mask, j);
      if (ones == 0) continue;
      std::atomic_ref<uint64_t> word(block[j]);
      uint64_t old = word.load(std::memory_order_relaxed);
      uint64_t add;
      do {
        add = ones & ~FullNibbles(old);  // no carry: those counters are below 15
      } while (add != 0 &&
               !word.compare_exchange_weak(old, old + add, std::memory_order_relaxed));
      if ((ZeroNibbles(old) & ones) != 0) absent = true;
    }
  }
  return absent;
}

bool CountingBlockedBloomFilter::Remove(const KeyHash& key) {
  if (!MayContain(key)) return false;
  for (uint32_t line = 0; line < layout_.lines_per_key; ++line) {
    uint64_t* block = BlockOf(key, line);
    const BloomLineMask mask = MaskOf(key, line);
    for (size_t j = 0; j < kWordsPerBlock; ++j) {
      const uint64_t ones = OnesIn(mask, j);
      if (ones == 0) continue;
      std::atomic_ref<uint64_t> word(block[j]);
      uint64_t old = word.load(std::memory_order_relaxed);
      uint64_t sub;
      do {
        // Zero (another remove raced this one) and saturated counters stay.
        sub = ones & ~FullNibbles(old) & ~ZeroNibbles(old);
      } while (sub != 0 &&
               !word.compare_exchange_weak(old, old - sub, std::memory_order_relaxed));
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
  for (size_t i = 0; i < n; ++i) count += static_cast<uint64_t>(std::popcount(FullNibbles(Load(words_[i]))));
  return count;
}

}  // namespace urlsieve
