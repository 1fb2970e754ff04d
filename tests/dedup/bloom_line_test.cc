#include "dedup/bloom/bloom_line.h"

#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <vector>

#include "dedup/bloom/blocked_bloom_filter.h"

namespace urlsieve {
namespace {

using bloom_line_internal::BuildMaskScalar;

struct alignas(64) Line {
  std::array<uint64_t, kBloomWordsPerLine> words{};
};

uint32_t PopCount(const BloomLineMask& mask) {
  uint32_t n = 0;
  for (uint64_t w : mask.words) n += static_cast<uint32_t>(std::popcount(w));
  return n;
}

// The positions are part of the snapshot format: these masks were computed by an independent
// implementation of the formula in bloom_line.h (1 + ((h · (splitmix64(i) | 1)) · 511 >> 64)).
TEST(BloomLineTest, PositionsArePinned) {
  struct Case {
    uint64_t hash;
    uint32_t first, count;
    BloomLineMask mask;
  };
  const Case cases[] = {
      {0x0123456789ABCDEFULL,
       0,
       9,
       {{0x0000000000000102ULL, 0x0010000000000000ULL, 0x0000000000000000ULL, 0x0000000200000000ULL,
         0x0000000040000000ULL, 0x8000000000000020ULL, 0x0000000000000080ULL,
         0x0000010000000000ULL}}},
      {0xFEDCBA9876543210ULL,
       9,
       9,
       {{0x0000010000000000ULL, 0x0000000200080000ULL, 0x0000000000000000ULL, 0x0000000000040000ULL,
         0x0001100000001000ULL, 0x0000000000000000ULL, 0x0000000000800000ULL,
         0x0000000080000000ULL}}},
      {0xDEADBEEFCAFEF00DULL,
       0,
       48,
       {{0x900010c144481000ULL, 0x00400400200a0040ULL, 0x0000000000002001ULL, 0x040c000000010008ULL,
         0x0000080000008200ULL, 0x0120080108468000ULL, 0x0008808000800008ULL,
         0x0000020080100800ULL}}},
  };
  for (BloomLineKernel kernel : {BloomLineKernel::kScalar, BloomLineKernel::kAvx512}) {
    if (!BloomLineKernelSupported(kernel)) continue;
    for (const Case& c : cases) {
      EXPECT_EQ(BuildBloomLineMask(kernel, c.hash, c.first, c.count), c.mask)
          << BloomLineKernelName(kernel) << " " << c.count;
    }
  }
}

TEST(BloomLineTest, ScalarMasksHaveAtMostCountBitsAndNeverTheLockBit) {
  std::mt19937_64 rng(7);
  for (uint32_t count = 1; count <= kBloomMaxBitsPerLine; ++count) {
    for (int i = 0; i < 200; ++i) {
      const BloomLineMask mask = BuildMaskScalar(rng(), count, count);
      EXPECT_GE(PopCount(mask), 1u);
      EXPECT_LE(PopCount(mask), count);
      EXPECT_EQ(mask.words[0] & 1, 0u);
    }
  }
}

// The AVX-512 kernel must agree with the scalar one bit for bit, for every count (the
// constant-count paths and the generic one) and both lines' position ranges.
TEST(BloomLineTest, Avx512KernelMatchesScalar) {
  if (!BloomLineKernelSupported(BloomLineKernel::kAvx512)) {
    GTEST_SKIP() << "no AVX-512 (F+DQ) here, or a TSan build";
  }
  std::mt19937_64 rng(11);
  for (uint32_t count = 1; count <= kBloomMaxBitsPerLine; ++count) {
    for (uint32_t first : {0u, count}) {
      for (int i = 0; i < 500; ++i) {
        const uint64_t hash = rng();
        const BloomLineMask scalar = BuildMaskScalar(hash, first, count);
        ASSERT_EQ(BuildBloomLineMask(BloomLineKernel::kAvx512, hash, first, count), scalar)
            << "count " << count << " first " << first << " hash " << hash;
      }
    }
  }
  // Line operations: same answers and same resulting lines.
  const std::atomic<uint32_t> guard{1};
  for (int i = 0; i < 2000; ++i) {
    Line scalar_line, vector_line;
    for (size_t w = 0; w < kBloomWordsPerLine; ++w) {
      scalar_line.words[w] = vector_line.words[w] = rng() & rng() & ~uint64_t{w == 0};
    }
    const uint64_t hash = rng();
    const uint32_t count = 1 + static_cast<uint32_t>(rng() % kBloomMaxBitsPerLine);
    const BloomLineMask mask = BuildMaskScalar(hash, 0, count);
    EXPECT_EQ(LineHasAll(BloomLineKernel::kAvx512, vector_line.words.data(), mask),
              LineHasAll(BloomLineKernel::kScalar, scalar_line.words.data(), mask));
    EXPECT_EQ(
        LockedSetLine(BloomLineKernel::kAvx512, vector_line.words.data(), hash, count, guard, 1),
        LockedSetLine(BloomLineKernel::kScalar, scalar_line.words.data(), hash, count, guard, 1));
    EXPECT_EQ(vector_line.words, scalar_line.words);
  }
}

TEST(BloomLineTest, LockedSetThenHasAll) {
  std::mt19937_64 rng(3);
  const std::atomic<uint32_t> guard{1};
  for (BloomLineKernel kernel : {BloomLineKernel::kScalar, BloomLineKernel::kAvx512}) {
    if (!BloomLineKernelSupported(kernel)) continue;
    Line locked, shared;
    const uint64_t a = rng();
    const uint64_t b = rng();
    const BloomLineMask mask_a = BuildBloomLineMask(kernel, a, 0, 9);
    EXPECT_FALSE(LineHasAll(kernel, locked.words.data(), mask_a));
    EXPECT_EQ(LockedSetLine(kernel, locked.words.data(), a, 9, guard, 1), LockedSet::kNew);
    EXPECT_TRUE(LineSetShared(shared.words.data(), mask_a));
    EXPECT_EQ(locked.words, shared.words);  // the same bits, and the lock released
    EXPECT_TRUE(LineHasAll(kernel, locked.words.data(), mask_a));
    EXPECT_EQ(LockedSetLine(kernel, locked.words.data(), a, 9, guard, 1), LockedSet::kSeen);
    EXPECT_FALSE(LineSetShared(shared.words.data(), mask_a));
    EXPECT_FALSE(LineHasAll(kernel, locked.words.data(), BuildBloomLineMask(kernel, b, 0, 9)));
  }
}

TEST(BloomLineTest, ChangedGuardWritesNothingAndKeepsTheLock) {
  std::mt19937_64 rng(9);
  const std::atomic<uint32_t> guard{2};
  for (BloomLineKernel kernel : {BloomLineKernel::kScalar, BloomLineKernel::kAvx512}) {
    if (!BloomLineKernelSupported(kernel)) continue;
    Line line;
    line.words[3] = 0xF0F0;
    const Line before = line;
    EXPECT_EQ(LockedSetLine(kernel, line.words.data(), rng(), 9, guard, 1),
              LockedSet::kGuardChanged);
    EXPECT_EQ(line.words[0], before.words[0] | 1);  // held
    UnlockBloomLine(line.words.data(), /*exclusive_word=*/true);
    EXPECT_EQ(line.words, before.words);
  }
}

// Two filters fed the same keys, one per kernel, hold identical bits: snapshots written on a
// machine with AVX-512 load and answer the same on one without.
TEST(BloomLineTest, FiltersWithEitherKernelHoldTheSameBits) {
  if (!BloomLineKernelSupported(BloomLineKernel::kAvx512)) {
    GTEST_SKIP() << "no AVX-512 (F+DQ) here, or a TSan build";
  }
  for (const BloomLayout& layout :
       {ChooseBloomLayout(20'000, 1e-3), ChooseBloomLayout(20'000, 1e-6)}) {
    auto scalar = BlockedBloomFilter::Create(layout, BloomLineKernel::kScalar);
    auto vector = BlockedBloomFilter::Create(layout, BloomLineKernel::kAvx512);
    ASSERT_TRUE(scalar.ok() && vector.ok());
    std::mt19937_64 rng(5);
    const std::atomic<uint32_t> guard{1};
    for (int i = 0; i < 20'000; ++i) {
      const KeyHash key{rng(), rng()};
      EXPECT_EQ((*scalar)->InsertLockedIf(key, guard, 1), (*vector)->InsertLockedIf(key, guard, 1));
    }
    const auto a = (*scalar)->words();
    const auto b = (*vector)->words();
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin())) << layout.lines_per_key;
  }
}

TEST(BloomLineTest, UnsupportedKernelIsAnError) {
  if (BloomLineKernelSupported(BloomLineKernel::kAvx512)) GTEST_SKIP() << "AVX-512 runs here";
  auto filter = BlockedBloomFilter::Create(ChooseBloomLayout(1000, 1e-3), BloomLineKernel::kAvx512);
  ASSERT_FALSE(filter.ok());
  EXPECT_EQ(filter.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace urlsieve
