#include "dedup/bloom/bloom_math.h"

#include <gtest/gtest.h>

#include <cmath>

namespace urlsieve {
namespace {

double ClassicBitsPerKey(double fp_rate) {
  return -std::log(fp_rate) / (std::log(2) * std::log(2));
}

double BitsPerKey(const BloomLayout& layout, uint64_t keys) {
  return static_cast<double>(layout.num_blocks) * kBloomBlockBits / static_cast<double>(keys);
}

TEST(BloomMathTest, ChosenLayoutMeetsTargetAndIsMinimal) {
  for (double eps : {1e-2, 1e-3, 1e-4, 1e-5, 1e-7}) {
    const uint64_t n = 1'000'000;
    BloomLayout layout = ChooseBloomLayout(n, eps);
    EXPECT_LE(BlockedFalsePositiveRate(layout, n), eps) << eps;
    // One block fewer misses the target: the search found the boundary.
    BloomLayout smaller = layout;
    --smaller.num_blocks;
    EXPECT_GT(BlockedFalsePositiveRate(smaller, n), eps) << eps;
  }
}

TEST(BloomMathTest, BlockedLayoutNeedsMoreThanClassicFormula) {
  // The point of the Poisson-mixture correction: sizing a blocked filter by the classic formula
  // would miss ε. At 1e-3 the blocked filter needs about 1.1 bits per key more.
  const uint64_t n = 1'000'000;
  BloomLayout layout = ChooseBloomLayout(n, 1e-3);
  EXPECT_GT(BitsPerKey(layout, n), ClassicBitsPerKey(1e-3));
  EXPECT_LT(BitsPerKey(layout, n), 16.0);
  BloomLayout classic_sized{static_cast<uint64_t>(ClassicBitsPerKey(1e-3) * n / kBloomBlockBits),
                            layout.bits_per_line, 1};
  EXPECT_GT(BlockedFalsePositiveRate(classic_sized, n), 1.2e-3);
}

TEST(BloomMathTest, TwoLinesOnlyForSmallRatesAndOnlyWhenSmaller) {
  EXPECT_EQ(ChooseBloomLayout(1'000'000, 1e-3).lines_per_key, 1u);
  EXPECT_EQ(ChooseBloomLayout(1'000'000, 1e-4).lines_per_key, 1u);
  BloomLayout two = ChooseBloomLayout(1'000'000, 1e-6);
  EXPECT_EQ(two.lines_per_key, 2u);
  // A one-line layout meeting 1e-6 needs more memory: that is why two were chosen.
  BloomLayout one{two.num_blocks, 1, 1};
  bool any_one_line_fits = false;
  for (uint32_t k = 1; k <= kBloomMaxBitsPerLine; ++k) {
    one.bits_per_line = k;
    any_one_line_fits |= BlockedFalsePositiveRate(one, 1'000'000) <= 1e-6;
  }
  EXPECT_FALSE(any_one_line_fits);
}

TEST(BloomMathTest, RateRisesWithLoad) {
  BloomLayout layout = ChooseBloomLayout(100'000, 1e-3);
  EXPECT_EQ(BlockedFalsePositiveRate(layout, 0), 0.0);
  EXPECT_LT(BlockedFalsePositiveRate(layout, 50'000), BlockedFalsePositiveRate(layout, 100'000));
  EXPECT_GT(BlockedFalsePositiveRate(layout, 1'000'000), 0.1);  // 10x overfull
  EXPECT_LE(BlockedFalsePositiveRate(layout, 1'000'000'000), 1.0);
}

TEST(BloomMathTest, SizesBeyond32BitIndices) {
  // 10^9 keys at 1e-4 need ~2.7·10^10 bits: more than 2^32, so block indices need 64 bits.
  BloomLayout layout = ChooseBloomLayout(1'000'000'000, 1e-4);
  EXPECT_GT(layout.num_blocks * kBloomBlockBits, uint64_t{1} << 32);
  EXPECT_LE(BlockedFalsePositiveRate(layout, 1'000'000'000), 1e-4);
}

}  // namespace
}  // namespace urlsieve
