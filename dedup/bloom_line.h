// The bits a key sets in one 512-bit line of a blocked Bloom filter, and the operations on a line.
//
// Bit positions: the i-th is 1 + multiply-high(bits_hash · multiplier[i], 511), a position in
// [1, 511] (bit 0 of a line is its block's lock), with one odd multiplier per position. Each
// position is an independent multiply (no dependency chain), and unlike double hashing (h1 + i·h2)
// in a 511-slot line no key gets a degenerate stride that piles its bits onto a few positions.
// The positions are part of the snapshot format: both kernels below compute exactly the same ones.
//
// Two kernels: AVX-512 (F + DQ) where the CPU and OS support it, else portable scalar code; a
// filter takes the fastest one when it is created. A caller builds a key's mask before touching its line, so the work
// overlaps the line's cache miss and stays out of the block's lock. The AVX-512 kernel builds a
// mask and updates a line in about 60 instructions instead of about 200, which is what lets one
// core keep several inserts' misses in flight. Under ThreadSanitizer only the scalar kernel is
// built (TSan checks word-sized atomics, not vector accesses).
//
// Concurrency of the line operations: LineSetShared may race with anything. LineSetOwned requires
// that no other thread writes the line meanwhile (the caller holds the block's lock and every
// writer of the line takes it) and may race with readers. A reader sees each 64-bit word before
// or after a write; bits are only ever set, so whatever it sees is a subset of the final line, and
// a reader racing with an insert may answer "absent", which linearizes it before the insert.
//
// Thread-safety: masks are plain values; line operations as above.
#ifndef URLSIEVE_DEDUP_BLOOM_LINE_H_
#define URLSIEVE_DEDUP_BLOOM_LINE_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "dedup/bloom_math.h"

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

// The fastest kernel this CPU supports (detected once), and whether `kernel` can run here (kScalar
// always can).
BloomLineKernel ActiveBloomLineKernel();
bool BloomLineKernelSupported(BloomLineKernel kernel);
const char* BloomLineKernelName(BloomLineKernel kernel);

namespace bloom_line_internal {
BloomLineMask BuildMaskScalar(uint64_t bits_hash, uint32_t first, uint32_t count);
bool HasAllScalar(const uint64_t* line, const BloomLineMask& mask);
bool SetOwnedScalar(uint64_t* line, const BloomLineMask& mask);
#if URLSIEVE_BLOOM_LINE_AVX512
BloomLineMask BuildMaskAvx512(uint64_t bits_hash, uint32_t first, uint32_t count);
bool HasAllAvx512(const uint64_t* line, const BloomLineMask& mask);
bool SetOwnedAvx512(uint64_t* line, const BloomLineMask& mask);
#endif
}  // namespace bloom_line_internal

// The operations, on a supported `kernel`; they branch to the kernel's code (a predictable branch
// and a direct call).

// The mask of positions first .. first+count−1 (count ≤ kBloomMaxBitsPerLine, first + count ≤
// 2·kBloomMaxBitsPerLine). A one-line key uses positions 0..k−1; a two-line key's second line
// uses k..2k−1.
inline BloomLineMask BuildBloomLineMask(BloomLineKernel kernel, uint64_t bits_hash,
                                        uint32_t first, uint32_t count) {
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

// Sets `mask` in `line`; returns whether any of its bits was unset. The caller is the line's only
// writer (see above).
inline bool LineSetOwned(BloomLineKernel kernel, uint64_t* line, const BloomLineMask& mask) {
#if URLSIEVE_BLOOM_LINE_AVX512
  if (kernel == BloomLineKernel::kAvx512) return bloom_line_internal::SetOwnedAvx512(line, mask);
#endif
  (void)kernel;
  return bloom_line_internal::SetOwnedScalar(line, mask);
}

// Sets `mask` in `line` with atomic fetch_or (other writers may race); returns whether any of its
// bits was unset before this call's writes.
bool LineSetShared(uint64_t* line, const BloomLineMask& mask);

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_LINE_H_
