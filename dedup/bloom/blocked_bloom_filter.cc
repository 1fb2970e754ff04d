#include "dedup/bloom/blocked_bloom_filter.h"

#include <sys/mman.h>

#include <array>
#include <atomic>
#include <bit>
#include <string>

namespace urlsieve {
namespace {

using bloom_internal::MulHigh;

inline uint64_t Load(const uint64_t& word) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(word)).load(std::memory_order_relaxed);
}

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;

}  // namespace

Result<std::unique_ptr<BlockedBloomFilter>> BlockedBloomFilter::Create(const BloomLayout& layout,
                                                                       BloomLineKernel kernel) {
  if (!BloomLineKernelSupported(kernel)) {
    return Status::InvalidArgument(std::string("bloom kernel not supported on this CPU: ") +
                                   BloomLineKernelName(kernel));
  }
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
      new BlockedBloomFilter(layout, kernel, static_cast<uint64_t*>(p), mapped));
}

BlockedBloomFilter::BlockedBloomFilter(const BloomLayout& layout, BloomLineKernel kernel,
                                       uint64_t* words, size_t mapped_bytes)
    : layout_(layout), kernel_(kernel), words_(words), mapped_bytes_(mapped_bytes) {}

BlockedBloomFilter::~BlockedBloomFilter() { munmap(words_, mapped_bytes_); }

uint64_t* BlockedBloomFilter::SecondLineOf(const KeyHash& key) const {
  // A remix of hash.low, so it is independent of the first line's index.
  const uint64_t remixed = (key.low ^ (key.low >> 29)) * 0xBF58476D1CE4E5B9ULL;
  return words_ + MulHigh(remixed, layout_.num_blocks) * kWordsPerBlock;
}

BloomLineMask BlockedBloomFilter::MaskOf(const KeyHash& key, uint32_t line) const {
  const uint32_t k = layout_.bits_per_line;
  return BuildBloomLineMask(kernel_, key.high, line * k, k);
}

void BlockedBloomFilter::Prefetch(const KeyHash& key) const {
  PrefetchLine(LineOf(key));
  if (layout_.lines_per_key == 2) PrefetchLine(SecondLineOf(key));
}

bool BlockedBloomFilter::MayContain(const KeyHash& key) const {
  if (!LineHasAll(kernel_, LineOf(key), MaskOf(key, 0))) return false;
  return layout_.lines_per_key == 1 || LineHasAll(kernel_, SecondLineOf(key), MaskOf(key, 1));
}

bool BlockedBloomFilter::InsertAtomic(const KeyHash& key) {
  uint64_t* line = LineOf(key);
  PrefetchLine(line);  // as in InsertLockedIf: fetch_or is a locked instruction too
  const bool changed = LineSetShared(line, MaskOf(key, 0));
  if (layout_.lines_per_key == 1) return changed;
  return LineSetShared(SecondLineOf(key), MaskOf(key, 1)) || changed;
}

LockedSet BlockedBloomFilter::InsertTwoLinesIf(const KeyHash& key, uint64_t* line,
                                               const std::atomic<uint32_t>& guard,
                                               uint32_t expected) {
  LockBloomLine(line);
  if (guard.load(std::memory_order_acquire) != expected) return LockedSet::kGuardChanged;
  // The second line is written by keys whose lock is elsewhere, and this line's first word by
  // keys whose second line it is: read-modify-writes throughout.
  const bool fresh = InsertAtomic(key);
  UnlockBloomLine(line, /*exclusive_word=*/false);
  return fresh ? LockedSet::kNew : LockedSet::kSeen;
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
