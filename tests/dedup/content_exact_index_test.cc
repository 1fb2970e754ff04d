// ExactContentIndex (dedup/content/exact_content_index.h): digests with a 48-bit value, compared
// against a std::unordered_map over random digests, digests that share a bucket or a remainder,
// erasures, and the memory bound of docs/features/content-seen.md, "The exact index".
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

#include "dedup/content/exact_content_index.h"

namespace urlsieve {
namespace {

TEST(ContentExactIndexTest, EmptyFindsNothing) {
  ExactContentIndex index;
  EXPECT_EQ(index.size(), 0u);
  EXPECT_FALSE(index.Find(0));
  EXPECT_FALSE(index.Find(~uint64_t{0}));
  EXPECT_FALSE(index.Erase(42));
}

TEST(ContentExactIndexTest, FirstValueStays) {
  ExactContentIndex index;
  EXPECT_FALSE(index.FindOrInsert(0x1234, 7));
  EXPECT_EQ(index.FindOrInsert(0x1234, 8), 7u);
  EXPECT_EQ(index.Find(0x1234), 7u);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_FALSE(index.FindOrInsert(0, ExactContentIndex::kMaxValue));
  EXPECT_EQ(index.Find(0), ExactContentIndex::kMaxValue);
}

// Digests that differ only in the top 16 bits (other buckets) or only in the low 48 bits (one
// bucket, sorted by remainder) are distinct.
TEST(ContentExactIndexTest, BucketAndRemainderBitsBothCount) {
  ExactContentIndex index;
  const uint64_t base = 0x0123456789abcdefULL;
  for (uint64_t i = 0; i < 64; ++i) {
    EXPECT_FALSE(index.FindOrInsert(base ^ (uint64_t{1} << i), i + 1)) << i;
  }
  EXPECT_FALSE(index.Find(base));
  for (uint64_t i = 0; i < 64; ++i) EXPECT_EQ(index.Find(base ^ (uint64_t{1} << i)), i + 1) << i;
}

TEST(ContentExactIndexTest, MatchesAMapUnderRandomInsertsAndErases) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    ExactContentIndex index;
    std::unordered_map<uint64_t, uint64_t> model;
    // Few top bits in play for half of the digests: buckets of hundreds of entries.
    for (int i = 0; i < 40000; ++i) {
      uint64_t digest = rng();
      if (i % 2 == 0) digest &= 0x0003ffffffffffffULL;
      if (i % 7 == 0 && !model.empty()) digest = model.begin()->first;  // a repeat
      const uint64_t value = rng() & ExactContentIndex::kMaxValue;
      const auto [it, inserted] = model.emplace(digest, value);
      const std::optional<uint64_t> before = index.FindOrInsert(digest, value);
      if (inserted) {
        EXPECT_FALSE(before) << seed << " " << i;
      } else {
        EXPECT_EQ(before, it->second) << seed << " " << i;
      }
      if (i % 3 == 0) {
        const uint64_t victim = i % 2 ? digest : rng();
        EXPECT_EQ(index.Erase(victim), model.erase(victim) == 1) << seed << " " << i;
      }
    }
    ASSERT_EQ(index.size(), model.size());
    for (const auto& [digest, value] : model) ASSERT_EQ(index.Find(digest), value);
    for (int i = 0; i < 1000; ++i) {
      const uint64_t absent = rng();
      if (!model.count(absent)) {
        EXPECT_FALSE(index.Find(absent));
      }
    }
    for (const auto& [digest, value] : model) ASSERT_TRUE(index.Erase(digest));
    EXPECT_EQ(index.size(), 0u);
  }
}

// 12 packed bytes per digest, buckets within 9/8 of their entries plus one: at 10^6 random digests
// (15 per bucket) that is at most 13.5 + 12 * 65536 / 10^6 + the bucket headers (8 + 8 slack +
// 8 pointer bytes per bucket): about 15.9 bytes.
TEST(ContentExactIndexTest, MemoryStaysWithinNineEighthsOfThePackedEntries) {
  std::mt19937_64 rng(11);
  ExactContentIndex index;
  const uint64_t n = 1000000;
  for (uint64_t i = 0; i < n; ++i) index.FindOrInsert(rng(), i);
  ASSERT_EQ(index.size(), n);
  const double bound = 12.0 * n * 9 / 8 + (12.0 + 24.0) * 65536 + 1024;
  EXPECT_LE(static_cast<double>(index.memory_bytes()), bound);
  EXPECT_GE(index.memory_bytes(), 12 * n);
  // Erasing most of them gives most of the memory back.
  std::mt19937_64 replay(11);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t digest = replay();
    if (i % 10 != 0) {
      ASSERT_TRUE(index.Erase(digest));
    }
  }
  EXPECT_LE(static_cast<double>(index.memory_bytes()), 12.0 * n / 10 * 9 / 8 + 36.0 * 65536 + 1024);
}

TEST(ContentExactIndexTest, Moves) {
  ExactContentIndex a;
  a.FindOrInsert(5, 6);
  ExactContentIndex b(std::move(a));
  EXPECT_EQ(b.Find(5), 6u);
  ExactContentIndex c;
  c = std::move(b);
  EXPECT_EQ(c.Find(5), 6u);
  EXPECT_EQ(c.size(), 1u);
}

}  // namespace
}  // namespace urlsieve
