// NearDuplicateIndex (dedup/content/near_duplicate_index.h): for every k = 0 .. 7, every stored
// fingerprint is found at distance 0 .. k from the query and none at k + 1 (random bit flips, many
// seeds, against a brute-force scan), the nearest of several wins, Erase, and the memory figures of
// docs/features/content-seen.md, "The near index".
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <utility>
#include <vector>

#include "dedup/content/near_duplicate_index.h"
#include "dedup/content/simhash.h"

namespace urlsieve {
namespace {

uint64_t FlipBits(uint64_t fp, int count, std::mt19937_64& rng) {
  std::vector<int> bits(64);
  for (int i = 0; i < 64; ++i) bits[i] = i;
  std::shuffle(bits.begin(), bits.end(), rng);
  for (int i = 0; i < count; ++i) fp ^= uint64_t{1} << bits[i];
  return fp;
}

// The nearest (then smallest value) by brute force: what Find must return.
std::optional<NearMatch> BruteForce(const std::vector<std::pair<uint64_t, uint64_t>>& stored,
                                    uint64_t query, int k) {
  std::optional<NearMatch> best;
  for (const auto& [fp, value] : stored) {
    const int d = HammingDistance(fp, query);
    if (d > k) continue;
    if (!best || d < best->distance || (d == best->distance && value < best->value)) {
      best = NearMatch{fp, value, d};
    }
  }
  return best;
}

class ContentNearIndexTest : public ::testing::TestWithParam<int> {};

INSTANTIATE_TEST_SUITE_P(K, ContentNearIndexTest, ::testing::Range(0, 8));

// Every distance 0 .. k from a stored fingerprint is found (the pigeonhole over k + 1 blocks),
// k + 1 is not, whichever bits are flipped: 20 seeds x 64 fingerprints x every distance.
TEST_P(ContentNearIndexTest, FindsEveryDistanceUpToKAndNothingBeyond) {
  const int k = GetParam();
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed * 1000 + k);
    NearDuplicateIndex index(k);
    ASSERT_EQ(index.max_distance(), k);
    std::vector<uint64_t> stored;
    // Far apart (distance > 2k + 2 from each other), so each query has one answer.
    while (stored.size() < 64) {
      const uint64_t fp = rng();
      bool far = true;
      for (uint64_t other : stored) far = far && HammingDistance(fp, other) > 2 * k + 2;
      if (far) stored.push_back(fp);
    }
    for (size_t i = 0; i < stored.size(); ++i) index.Insert(stored[i], i + 1);
    for (size_t i = 0; i < stored.size(); ++i) {
      for (int d = 0; d <= k + 1; ++d) {
        for (int trial = 0; trial < 4; ++trial) {
          const uint64_t query = FlipBits(stored[i], d, rng);
          const std::optional<NearMatch> match = index.Find(query);
          if (d <= k) {
            ASSERT_TRUE(match) << "k " << k << " seed " << seed << " d " << d;
            EXPECT_EQ(match->fingerprint, stored[i]);
            EXPECT_EQ(match->value, i + 1);
            EXPECT_EQ(match->distance, d);
          } else {
            ASSERT_FALSE(match) << "k " << k << " seed " << seed << " found at distance "
                                << match->distance;
          }
        }
      }
    }
  }
}

// Many fingerprints, some near each other: Find agrees with the brute force on every query.
TEST_P(ContentNearIndexTest, AgreesWithBruteForceOnClusters) {
  const int k = GetParam();
  std::mt19937_64 rng(77 + k);
  NearDuplicateIndex index(k);
  std::vector<std::pair<uint64_t, uint64_t>> stored;
  std::vector<uint64_t> centres;
  for (int c = 0; c < 40; ++c) centres.push_back(rng());
  for (uint64_t v = 1; v <= 2000; ++v) {
    const uint64_t fp =
        FlipBits(centres[rng() % centres.size()], static_cast<int>(rng() % 12), rng);
    stored.emplace_back(fp, v);
    index.Insert(fp, v);
  }
  EXPECT_EQ(index.size(), stored.size());
  for (int q = 0; q < 2000; ++q) {
    const uint64_t query =
        FlipBits(centres[rng() % centres.size()], static_cast<int>(rng() % 12), rng);
    const std::optional<NearMatch> want = BruteForce(stored, query, k);
    const std::optional<NearMatch> got = index.Find(query);
    ASSERT_EQ(got.has_value(), want.has_value()) << q;
    if (want) {
      EXPECT_EQ(got->distance, want->distance) << q;
      EXPECT_EQ(got->value, want->value) << q;
      EXPECT_EQ(got->fingerprint, want->fingerprint) << q;
    }
  }
}

TEST_P(ContentNearIndexTest, EraseRemovesOnePairOnly) {
  const int k = GetParam();
  NearDuplicateIndex index(k);
  const uint64_t fp = 0xfeedfacecafebeefULL;
  index.Insert(fp, 10);
  index.Insert(fp, 11);  // the same fingerprint twice
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.Find(fp)->value, 10u);
  EXPECT_FALSE(index.Erase(fp, 12));
  EXPECT_FALSE(index.Erase(fp ^ 1, 10));
  EXPECT_TRUE(index.Erase(fp, 10));
  EXPECT_EQ(index.size(), 1u);
  ASSERT_TRUE(index.Find(fp));
  EXPECT_EQ(index.Find(fp)->value, 11u);
  if (k > 0) {
    EXPECT_EQ(index.Find(fp ^ 1)->value, 11u);
  }
  EXPECT_TRUE(index.Erase(fp, 11));
  EXPECT_FALSE(index.Find(fp));
  EXPECT_FALSE(index.Erase(fp, 11));
  EXPECT_EQ(index.size(), 0u);
}

// Random inserts and erasures against the brute force.
TEST_P(ContentNearIndexTest, AgreesWithBruteForceUnderErasures) {
  const int k = GetParam();
  std::mt19937_64 rng(5 + k);
  NearDuplicateIndex index(k);
  std::vector<std::pair<uint64_t, uint64_t>> stored;
  const uint64_t centre = rng();
  for (uint64_t v = 1; v <= 3000; ++v) {
    const uint64_t fp = FlipBits(centre, static_cast<int>(rng() % 20), rng);
    stored.emplace_back(fp, v);
    index.Insert(fp, v);
    if (v % 3 == 0) {
      const size_t victim = rng() % stored.size();
      ASSERT_TRUE(index.Erase(stored[victim].first, stored[victim].second));
      stored.erase(stored.begin() + static_cast<std::ptrdiff_t>(victim));
    }
  }
  ASSERT_EQ(index.size(), stored.size());
  for (int q = 0; q < 1000; ++q) {
    const uint64_t query = FlipBits(centre, static_cast<int>(rng() % 20), rng);
    const std::optional<NearMatch> want = BruteForce(stored, query, k);
    const std::optional<NearMatch> got = index.Find(query);
    ASSERT_EQ(got.has_value(), want.has_value()) << q;
    if (want) {
      EXPECT_EQ(got->distance, want->distance);
      EXPECT_EQ(got->value, want->value);
    }
  }
}

TEST(ContentNearIndexTest, NearestOfSeveralWins) {
  NearDuplicateIndex index(3);
  const uint64_t query = 0x0f0f0f0f0f0f0f0fULL;
  index.Insert(query ^ 0x7, 1);                  // distance 3
  index.Insert(query ^ 0x100000000ULL, 2);       // distance 1
  index.Insert(query ^ (uint64_t{3} << 62), 3);  // distance 2
  index.Insert(query ^ 0x80000000ULL, 4);        // distance 1, later value
  std::optional<NearMatch> match = index.Find(query);
  ASSERT_TRUE(match);
  EXPECT_EQ(match->distance, 1);
  EXPECT_EQ(match->value, 2u);
  EXPECT_EQ(match->fingerprint, query ^ 0x100000000ULL);
  index.Insert(query, 5);
  EXPECT_EQ(index.Find(query)->value, 5u);
  EXPECT_EQ(index.Find(query)->distance, 0);
}

TEST(ContentNearIndexTest, FindOrInsertStoresOnlyTheFirstOfANeighbourhood) {
  NearDuplicateIndex index(3);
  EXPECT_FALSE(index.FindOrInsert(1000, 1));
  std::optional<NearMatch> match = index.FindOrInsert(1000 ^ 0x10101, 2);
  ASSERT_TRUE(match);
  EXPECT_EQ(match->value, 1u);
  EXPECT_EQ(match->distance, 3);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_FALSE(index.FindOrInsert(1000 ^ 0xf, 3));  // distance 4: a first
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.Find(1000 ^ 0xf)->value, 3u);
  EXPECT_EQ(NearDuplicateIndex::kMaxValue, (uint64_t{1} << 48) - 1);
  index.Insert(77, NearDuplicateIndex::kMaxValue);
  EXPECT_EQ(index.Find(77)->value, NearDuplicateIndex::kMaxValue);
}

// k = 3: 12 + 3 * 6 = 30 packed bytes per fingerprint, within 9/8 (33.75) plus the headers of
// 4 x 65536 buckets (24 bytes each, with the block header and slack) and one spare entry per
// bucket.
TEST(ContentNearIndexTest, MemoryAtKThreeStaysWithinNineEighths) {
  std::mt19937_64 rng(3);
  NearDuplicateIndex index(3);
  const uint64_t n = 1000000;
  for (uint64_t i = 0; i < n; ++i) index.Insert(rng(), i);
  const double bound = 30.0 * n * 9 / 8 + 4 * 65536 * (24.0 + 12.0) + 4096;
  EXPECT_LE(static_cast<double>(index.memory_bytes()), bound);
  EXPECT_GE(index.memory_bytes(), 30 * n);
}

}  // namespace
}  // namespace urlsieve
