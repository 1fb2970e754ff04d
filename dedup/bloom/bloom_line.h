// The bits a key sets in one 512-bit line of a blocked Bloom filter, and the operations on a line.
//
// Bit positions: the i-th is 1 + multiply-high(bits_hash · multiplier[i], 511), a position in
// [1, 511] (bit 0 of a line is its block's lock), with one odd multiplier per position. Each
// position is an independent multiply (no dependency chain), and unlike double hashing (h1 + i·h2)
// in a 511-slot line no key gets a degenerate stride that piles its bits onto a few positions.
// The positions are part of the snapshot format: both kernels below compute exactly the same ones.
//
// Two kernels: AVX-512 (F + DQ) where the CPU and OS support it, else portable scalar code; a
// filter takes the active kernel when it is created. The AVX-512 kernel builds a mask and updates a
// line in about 60 instructions instead of about 200, and a core with fewer instructions between
// its inserts' locked instructions keeps more of their cache misses in flight. Under
// ThreadSanitizer only the scalar kernel is built (TSan checks word-sized atomics, not vector
// accesses).
//
// Locking: bit 0 of a line's first word is the line's spin lock (no key position uses it),
// taken with an acquire fetch_or and released with a release store (or fetch_and, where other
// threads may write the word without the lock).
//
// Concurrency of the line operations: LineSetShared may race with anything. LockedSetLine writes
// the line with plain stores under its lock, which requires that every writer of the line takes
// the lock; it may race with readers. A reader sees each 64-bit word before or after a write; bits
// are only ever set, so whatever it sees is a subset of the final line, and a reader racing with
// an insert may answer "absent", which linearizes it before the insert.
//
// Thread-safety: masks are plain values; line operations as above.
#ifndef URLSIEVE_DEDUP_BLOOM_BLOOM_LINE_H_
#define URLSIEVE_DEDUP_BLOOM_BLOOM_LINE_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "dedup/bloom/bloom_math.h"

namespace urlsieve {

inline constexpr size_t kBloomWordsPerLine = kBloomBlockBits / 64;

struct alignas(64) BloomLineMask {
  std::array<uint64_t, kBloomWordsPerLine> words{};

  friend bool operator==(const BloomLineMask&, const BloomLineMask&) = default;
};

enum class BloomLineKernel { kScalar, kAvx512 };

#if (defined(__x86_64__) || defined(_M_X64)) && !defined(__SANITIZE_THREAD__)
#if defined(__has_feature)
#if !__has_feature(thread_sanitizer)
#define URLSIEVE_BLOOM_LINE_AVX512 1
#endif
#else
#define URLSIEVE_BLOOM_LINE_AVX512 1
#endif
#endif
#ifndef URLSIEVE_BLOOM_LINE_AVX512
#define URLSIEVE_BLOOM_LINE_AVX512 0
#endif

// The kernel filters use: the fastest one this CPU supports, or the scalar one if the environment
// sets URLSIEVE_BLOOM_KERNEL=scalar (read once). Whether `kernel` can run here (kScalar always
// can).
BloomLineKernel ActiveBloomLineKernel();
bool BloomLineKernelSupported(BloomLineKernel kernel);
const char* BloomLineKernelName(BloomLineKernel kernel);

// What LockedSetLine did.
enum class LockedSet {
  kSeen,          // every bit was already set; the lock is released
  kNew,           // some bit was unset and is now set; the lock is released
  kGuardChanged,  // the guard had changed: nothing was written, and the lock is still held
};

namespace bloom_line_internal {
BloomLineMask BuildMaskScalar(uint64_t bits_hash, uint32_t first, uint32_t count);
bool HasAllScalar(const uint64_t* line, const BloomLineMask& mask);
LockedSet LockedSetScalar(uint64_t* line, uint64_t bits_hash, uint32_t count,
                          const std::atomic<uint32_t>& guard, uint32_t expected);
#if URLSIEVE_BLOOM_LINE_AVX512
BloomLineMask BuildMaskAvx512(uint64_t bits_hash, uint32_t first, uint32_t count);
bool HasAllAvx512(const uint64_t* line, const BloomLineMask& mask);
LockedSet LockedSetAvx512(uint64_t* line, uint64_t bits_hash, uint32_t count,
                          const std::atomic<uint32_t>& guard, uint32_t expected);
#endif
void WaitAndLock(uint64_t* line);
}  // namespace bloom_line_internal

// The operations, on a supported `kernel`; they branch to the kernel's code (a predictable branch
// and a direct call).

// The mask of positions first .. first+count−1 (count ≤ kBloomMaxBitsPerLine, first + count ≤
// 2·kBloomMaxBitsPerLine). A one-line key uses positions 0..k−1; a two-line key's second line
// uses k..2k−1.
inline BloomLineMask BuildBloomLineMask(BloomLineKernel kernel, uint64_t bits_hash, uint32_t first,
                                        uint32_t count) {
#if URLSIEVE_BLOOM_LINE_AVX512
  if (kernel == BloomLineKernel::kAvx512) {
    return bloom_line_internal::BuildMaskAvx512(bits_hash, first, count);
  }
#endif
  (void)kernel;
  return bloom_line_internal::BuildMaskScalar(bits_hash, first, count);
}

// Whether every bit of `mask` is set in the 64-byte-aligned `line`.
inline bool LineHasAll(BloomLineKernel kernel, const uint64_t* line, const BloomLineMask& mask) {
#if URLSIEVE_BLOOM_LINE_AVX512
  if (kernel == BloomLineKernel::kAvx512) return bloom_line_internal::HasAllAvx512(line, mask);
#endif
  (void)kernel;
  return bloom_line_internal::HasAllScalar(line, mask);
}

// Sets `mask` in `line` with atomic fetch_or (other writers may race); returns whether any of its
// bits was unset before this call's writes.
bool LineSetShared(uint64_t* line, const BloomLineMask& mask);

inline void LockBloomLine(uint64_t* line) {
  if (std::atomic_ref<uint64_t>(line[0]).fetch_or(1, std::memory_order_acquire) & 1) {
    bloom_line_internal::WaitAndLock(line);
  }
}

// `exclusive_word`: every writer of the line's first word holds the lock (then nobody else writes
// it now, waiters' failed fetch_or rewriting the same value, and a release store is enough).
inline void UnlockBloomLine(uint64_t* line, bool exclusive_word) {
  std::atomic_ref<uint64_t> word(line[0]);
  if (exclusive_word) {
    word.store(word.load(std::memory_order_relaxed) & ~uint64_t{1}, std::memory_order_release);
  } else {
    word.fetch_and(~uint64_t{1}, std::memory_order_release);
  }
}

// The locked test-and-set of a one-line key in one call: builds the mask of positions
// 0..count−1, takes the line's lock, and if `guard` (read under the lock) still equals
// `expected`, sets the mask with plain stores and releases the lock. The caller's decision to
// write only this line rests on `guard` (for the scalable filter, its layer count). One call keeps
// the mask in registers across the lock: on x86 no load after a locked instruction runs before
// the instruction completes, so work left until after the lock waits for the line, and delays the
// next insert's lock.
inline LockedSet LockedSetLine(BloomLineKernel kernel, uint64_t* line, uint64_t bits_hash,
                               uint32_t count, const std::atomic<uint32_t>& guard,
                               uint32_t expected) {
#if URLSIEVE_BLOOM_LINE_AVX512
  if (kernel == BloomLineKernel::kAvx512) {
    return bloom_line_internal::LockedSetAvx512(line, bits_hash, count, guard, expected);
  }
#endif
  (void)kernel;
  return bloom_line_internal::LockedSetScalar(line, bits_hash, count, guard, expected);
}

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_BLOOM_LINE_H_
