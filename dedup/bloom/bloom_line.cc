#include "dedup/bloom/bloom_line.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string_view>
#include <thread>

#if URLSIEVE_BLOOM_LINE_AVX512
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_epi32(), which -Wmaybe-uninitialized
// and -Wuninitialized flag inside the intrinsics (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#endif

namespace urlsieve {
namespace {

constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

constexpr size_t kPositions = 2 * kBloomMaxBitsPerLine;
// One odd multiplier per position, padded by a vector's width so the AVX-512 kernel may load a
// whole group of eight past the last position it uses.
constexpr auto kMultipliers = [] {
  std::array<uint64_t, kPositions + 8> m{};
  for (size_t i = 0; i < kPositions; ++i) m[i] = SplitMix64(i) | 1;
  return m;
}();

// 1 + multiply-high(y, 511), in [1, 511].
inline uint32_t Position(uint64_t y) {
  __extension__ typedef unsigned __int128 Uint128;
  return 1 + static_cast<uint32_t>((static_cast<Uint128>(y) * 511) >> 64);
}

inline void AddPosition(uint64_t bits_hash, uint32_t i, BloomLineMask& mask) {
  const uint32_t pos = Position(bits_hash * kMultipliers[i]);
  mask.words[pos >> 6] |= uint64_t{1} << (pos & 63);
}

// With the count a constant the loop unrolls with immediate multipliers: building the mask is most
// of an in-cache insert's instructions. Both kernels do so for the counts ChooseBloomLayout picks
// for ε from 1e-1 to 1e-5.
#define URLSIEVE_FOR_EACH_CONST_COUNT(X) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14)

template <uint32_t kCount>
inline BloomLineMask MaskOf(uint64_t bits_hash, uint32_t first) {
  BloomLineMask mask;
#pragma GCC unroll 16
  for (uint32_t i = 0; i < kCount; ++i) AddPosition(bits_hash, first + i, mask);
  return mask;
}

inline uint64_t Load(const uint64_t& word) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(word)).load(std::memory_order_relaxed);
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

namespace bloom_line_internal {

BloomLineMask BuildMaskScalar(uint64_t bits_hash, uint32_t first, uint32_t count) {
  switch (count) {
#define URLSIEVE_CONST_COUNT(n) \
  case n:                       \
    return MaskOf<n>(bits_hash, first);
    URLSIEVE_FOR_EACH_CONST_COUNT(URLSIEVE_CONST_COUNT)
#undef URLSIEVE_CONST_COUNT
    default:
      break;
  }
  BloomLineMask mask;
  for (uint32_t i = 0; i < count; ++i) AddPosition(bits_hash, first + i, mask);
  return mask;
}

bool HasAllScalar(const uint64_t* line, const BloomLineMask& mask) {
  uint64_t missing = 0;
#pragma GCC unroll 8
  for (size_t w = 0; w < kBloomWordsPerLine; ++w) missing |= mask.words[w] & ~Load(line[w]);
  return missing == 0;
}

LockedSet LockedSetScalar(uint64_t* line, uint64_t bits_hash, uint32_t count,
                          const std::atomic<uint32_t>& guard, uint32_t expected) {
  const BloomLineMask mask = BuildMaskScalar(bits_hash, 0, count);
  // As in LockedSetAvx512: the mask is complete before the locked instruction.
  asm volatile("" : : "r"(&mask) : "memory");
  LockBloomLine(line);
  if (guard.load(std::memory_order_acquire) != expected) return LockedSet::kGuardChanged;
  uint64_t missing = 0;
#pragma GCC unroll 8
  for (size_t w = 0; w < kBloomWordsPerLine; ++w) {
    const uint64_t old = Load(line[w]);
    missing |= mask.words[w] & ~old;
    // Unconditional and branch-free: the line is already exclusive (the lock was just taken in
    // it), so rewriting an unchanged word costs nothing, while a data-dependent branch per word
    // would mispredict about half the time.
    std::atomic_ref<uint64_t>(line[w]).store(old | mask.words[w], std::memory_order_relaxed);
  }
  UnlockBloomLine(line, /*exclusive_word=*/true);
  return missing != 0 ? LockedSet::kNew : LockedSet::kSeen;
}

#if URLSIEVE_BLOOM_LINE_AVX512
#define URLSIEVE_AVX512_TARGET __attribute__((target("avx512f,avx512dq")))

namespace {

// Lane w of the result is bit pos[w] of a 512-bit line restricted to word w: 1 << (pos[w] − 64·w),
// which vpsllvq makes 0 wherever the count is outside [0, 63] (negative counts are huge unsigned).
URLSIEVE_AVX512_TARGET inline __m512i OneHot(__m512i pos) {
  const __m512i word_base = _mm512_setr_epi64(0, 64, 128, 192, 256, 320, 384, 448);
  return _mm512_sllv_epi64(_mm512_set1_epi64(1), _mm512_sub_epi64(pos, word_base));
}

// Rotation r puts position (w + r) mod 8 in lane w: the eight rotations of a group pair each
// position with each word, without the index vectors a broadcast per position needs.
template <int kRotation>
URLSIEVE_AVX512_TARGET inline __m512i AddRotation(__m512i mask, __m512i pos) {
  return _mm512_or_si512(mask, OneHot(_mm512_alignr_epi64(pos, pos, kRotation)));
}

// Positions index .. index+7. Exactly Position(): y·511 = (y << 9) − y, so its high word is
// (y >> 55) minus the borrow of the low word's subtraction, (y << 9) < y.
URLSIEVE_AVX512_TARGET inline __m512i PositionGroup(__m512i bits_hash, uint32_t index) {
  const __m512i y = _mm512_mullo_epi64(bits_hash, _mm512_loadu_si512(&kMultipliers[index]));
  const __mmask8 borrow = _mm512_cmplt_epu64_mask(_mm512_slli_epi64(y, 9), y);
  const __m512i high = _mm512_srli_epi64(y, 55);
  const __m512i one = _mm512_set1_epi64(1);
  return _mm512_add_epi64(_mm512_mask_sub_epi64(high, borrow, high, one), one);
}

// ORs the one-hot lines of the first `lanes` positions of `pos` into `mask`.
[[gnu::always_inline]] URLSIEVE_AVX512_TARGET inline __m512i AddGroup(__m512i mask, __m512i pos,
                                                                      uint32_t lanes) {
  if (lanes == 8) {
    mask = AddRotation<0>(mask, pos);
    mask = AddRotation<1>(mask, pos);
    mask = AddRotation<2>(mask, pos);
    mask = AddRotation<3>(mask, pos);
    mask = AddRotation<4>(mask, pos);
    mask = AddRotation<5>(mask, pos);
    mask = AddRotation<6>(mask, pos);
    return AddRotation<7>(mask, pos);
  }
#pragma GCC unroll 8
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    mask = _mm512_or_si512(mask, OneHot(_mm512_permutexvar_epi64(_mm512_set1_epi64(lane), pos)));
  }
  return mask;
}

// Always inlined: on the insert path a call (and its stack frame) costs as much as the mask, and
// with a constant count the loops unroll.
[[gnu::always_inline]] URLSIEVE_AVX512_TARGET inline __m512i MaskVector(__m512i bits_hash,
                                                                        uint32_t first,
                                                                        uint32_t count) {
  __m512i mask = _mm512_setzero_si512();
#pragma GCC unroll 2
  for (uint32_t base = 0; base < count; base += 8) {
    mask = AddGroup(mask, PositionGroup(bits_hash, first + base), std::min(count - base, 8u));
  }
  return mask;
}

[[gnu::always_inline]] URLSIEVE_AVX512_TARGET inline __m512i MaskOfPositions(uint64_t bits_hash,
                                                                             uint32_t first,
                                                                             uint32_t count) {
  const __m512i hash = _mm512_set1_epi64(static_cast<long long>(bits_hash));
  switch (count) {
#define URLSIEVE_CONST_COUNT(n) \
  case n:                       \
    return MaskVector(hash, first, n);
    URLSIEVE_FOR_EACH_CONST_COUNT(URLSIEVE_CONST_COUNT)
#undef URLSIEVE_CONST_COUNT
    default:
      return MaskVector(hash, first, count);
  }
}

}  // namespace

URLSIEVE_AVX512_TARGET BloomLineMask BuildMaskAvx512(uint64_t bits_hash, uint32_t first,
                                                     uint32_t count) {
  BloomLineMask out;
  _mm512_store_si512(out.words.data(), MaskOfPositions(bits_hash, first, count));
  return out;
}

URLSIEVE_AVX512_TARGET bool HasAllAvx512(const uint64_t* line, const BloomLineMask& mask) {
  const __m512i m = _mm512_load_si512(mask.words.data());
  const __m512i absent = _mm512_andnot_si512(_mm512_load_si512(line), m);
  return _mm512_test_epi64_mask(absent, absent) == 0;
}

// LockedSetScalar with the line read and written as one vector (see the header on why that is
// safe for concurrent readers; under the lock nobody else writes the line).
URLSIEVE_AVX512_TARGET LockedSet LockedSetAvx512(uint64_t* line, uint64_t bits_hash, uint32_t count,
                                                 const std::atomic<uint32_t>& guard,
                                                 uint32_t expected) {
  __m512i mask = MaskOfPositions(bits_hash, 0, count);
  // The mask is wanted only after the lock, and the compiler would move its computation there:
  // make it complete before the locked instruction.
  asm volatile("" : "+v"(mask));
  LockBloomLine(line);
  if (guard.load(std::memory_order_acquire) != expected) return LockedSet::kGuardChanged;
  const __m512i old = _mm512_load_si512(line);
  const __m512i absent = _mm512_andnot_si512(old, mask);
  _mm512_store_si512(line, _mm512_or_si512(old, mask));
  UnlockBloomLine(line, /*exclusive_word=*/true);
  return _mm512_test_epi64_mask(absent, absent) != 0 ? LockedSet::kNew : LockedSet::kSeen;
}

#undef URLSIEVE_AVX512_TARGET
#endif  // URLSIEVE_BLOOM_LINE_AVX512

void WaitAndLock(uint64_t* line) {
  std::atomic_ref<uint64_t> word(line[0]);
  int spins = 0;
  do {
    // Wait with plain loads so the line stays shared until the holder releases it. The lock is
    // held for a few nanoseconds; yield only in case the holder was descheduled.
    while (word.load(std::memory_order_relaxed) & 1) {
      if (++spins < 128) {
        CpuRelax();
      } else {
        std::this_thread::yield();
      }
    }
  } while (word.fetch_or(1, std::memory_order_acquire) & 1);
}

}  // namespace bloom_line_internal

bool LineSetShared(uint64_t* line, const BloomLineMask& mask) {
  uint64_t missing = 0;
#pragma GCC unroll 8
  for (size_t w = 0; w < kBloomWordsPerLine; ++w) {
    const uint64_t absent = mask.words[w] & ~Load(line[w]);
    missing |= absent;
    if (absent != 0) {
      std::atomic_ref<uint64_t>(line[w]).fetch_or(mask.words[w], std::memory_order_relaxed);
    }
  }
  return missing != 0;
}

bool BloomLineKernelSupported(BloomLineKernel kernel) {
  switch (kernel) {
    case BloomLineKernel::kScalar:
      return true;
    case BloomLineKernel::kAvx512:
#if URLSIEVE_BLOOM_LINE_AVX512
      // GCC's and clang's checks include the OS's saving of the ZMM state (XCR0).
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#else
      return false;
#endif
  }
  return false;
}

BloomLineKernel ActiveBloomLineKernel() {
  static const BloomLineKernel kernel = [] {
    // URLSIEVE_BLOOM_KERNEL=scalar forces the portable kernel (to compare, or where AVX-512 slows
    // the clock); an unsupported or unknown request falls back to the fastest supported kernel.
    const char* requested = std::getenv("URLSIEVE_BLOOM_KERNEL");
    if (requested != nullptr && std::string_view(requested) == "scalar") {
      return BloomLineKernel::kScalar;
    }
    return BloomLineKernelSupported(BloomLineKernel::kAvx512) ? BloomLineKernel::kAvx512
                                                              : BloomLineKernel::kScalar;
  }();
  return kernel;
}

const char* BloomLineKernelName(BloomLineKernel kernel) {
  return kernel == BloomLineKernel::kAvx512 ? "avx512" : "scalar";
}

}  // namespace urlsieve
