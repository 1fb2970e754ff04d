// The counting Bloom filter (counting_blocked_bloom_filter.h, counting_bloom_filter.h): the same
// answers as the plain filter at the same layout, removal, saturation without false negatives,
// growth, exactly-one-new under threads, memory, and its snapshots.
#include "dedup/bloom/counting_bloom_filter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "dedup/bloom/blocked_bloom_filter.h"
#include "dedup/bloom/bloom_math.h"
#include "dedup/bloom/counting_blocked_bloom_filter.h"
#include "dedup/bloom/scalable_bloom_filter.h"
#include "tests/dedup/bloom_test_util.h"
#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<CountingBlockedBloomFilter> MustCreateLayer(const BloomLayout& layout) {
  auto f = CountingBlockedBloomFilter::Create(layout);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(*f) : nullptr;
}

std::unique_ptr<CountingBloomFilter> MustCreate(uint64_t capacity, double fp_rate) {
  auto f = CountingBloomFilter::Create({capacity, fp_rate});
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(*f) : nullptr;
}

// A counter is non-zero exactly where the plain layer's bit is set: every answer is the plain
// layer's, so the false-positive rate is too. One- and two-line layouts.
TEST(CountingBlockedBloomFilterTest, AnswersAsThePlainLayerAtTheSameLayout) {
  uint64_t positives = 0;
  for (const BloomLayout layout :
       {ChooseBloomLayout(20000, 1e-3), ChooseBloomLayout(20000, 1e-6)}) {
    auto plain = BlockedBloomFilter::Create(layout);
    ASSERT_TRUE(plain.ok());
    auto counting = MustCreateLayer(layout);
    ASSERT_NE(counting, nullptr);
    const auto keys = RandomKeys(20000, 1);
    for (const KeyHash& k : keys) {
      const bool plain_new = (*plain)->InsertAtomic(k);
      EXPECT_EQ(counting->Add(k), plain_new);
    }
    const auto others = RandomKeys(200000, 2);
    for (const KeyHash& k : others) {
      const bool p = (*plain)->MayContain(k);
      ASSERT_EQ(counting->MayContain(k), p);
      positives += p ? 1 : 0;
    }
    for (const KeyHash& k : keys) ASSERT_TRUE(counting->MayContain(k));
    EXPECT_EQ(counting->CountNonZero(), (*plain)->CountSetBits());
    EXPECT_EQ(counting->bytes(), 4 * (*plain)->bytes());
  }
  EXPECT_GT(positives, 0u) << "the comparison saw no false positive at all";
}

TEST(CountingBlockedBloomFilterTest, RemoveMakesAKeyAbsentAndLeavesTheOthers) {
  auto f = MustCreateLayer(ChooseBloomLayout(1000, 1e-3));
  const auto keys = RandomKeys(1000, 3);
  for (const KeyHash& k : keys) f->Add(k);
  for (size_t i = 0; i < keys.size(); i += 2) EXPECT_TRUE(f->Remove(keys[i]));
  size_t still_there = 0;
  for (size_t i = 0; i < keys.size(); i += 2) still_there += f->MayContain(keys[i]) ? 1 : 0;
  for (size_t i = 1; i < keys.size(); i += 2) ASSERT_TRUE(f->MayContain(keys[i])) << i;
  // A removed key stays present only as a false positive of the remaining half.
  EXPECT_LT(still_there, 10u);
  for (size_t i = 1; i < keys.size(); i += 2) EXPECT_TRUE(f->Remove(keys[i]));
  EXPECT_EQ(f->CountNonZero(), 0u);
  EXPECT_FALSE(f->Remove(keys[0]));  // absent: nothing to decrement
}

// The test: once counters saturate (a layer loaded far past its capacity), removing keys
// never makes another inserted key absent.
TEST(CountingBlockedBloomFilterTest, SaturatedCountersGiveNoFalseNegative) {
  // ~2000 counters: 3000 keys load them ~10 deep (some saturate), 20000 keys ~70 (most do).
  for (const size_t load : {3000, 20000}) {
    auto f = MustCreateLayer(ChooseBloomLayout(200, 1e-2));
    const auto keys = RandomKeys(load, 4 + load);
    for (const KeyHash& k : keys) f->Add(k);
    const uint64_t saturated = f->CountSaturated();
    ASSERT_GT(saturated, 0u) << "the test needs saturated counters";
    if (load == 3000) {
      ASSERT_LT(saturated, f->CountNonZero() / 2);
    }
    for (size_t i = 0; i < keys.size(); i += 2) f->Remove(keys[i]);
    for (size_t i = 1; i < keys.size(); i += 2)
      ASSERT_TRUE(f->MayContain(keys[i])) << load << " " << i;
    // And again after removing half of the rest: every remaining key is still present.
    for (size_t i = 1; i < keys.size(); i += 4) f->Remove(keys[i]);
    for (size_t i = 3; i < keys.size(); i += 4)
      ASSERT_TRUE(f->MayContain(keys[i])) << load << " " << i;
    // Saturated counters were never decremented.
    EXPECT_EQ(f->CountSaturated(), saturated);
  }
}

TEST(CountingBloomFilterTest, ForgetMakesAKeyNewAgain) {
  auto f = MustCreate(10000, 1e-4);
  const auto keys = RandomKeys(5000, 5);
  for (const KeyHash& k : keys) ASSERT_TRUE(f->InsertIfNew(k));
  for (const KeyHash& k : keys) ASSERT_FALSE(f->InsertIfNew(k));
  for (size_t i = 0; i < keys.size(); i += 3) ASSERT_TRUE(f->Remove(keys[i]));
  size_t renewed = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool is_new = f->InsertIfNew(keys[i]);
    if (i % 3 != 0) {
      ASSERT_FALSE(is_new) << i;  // never forgotten
    } else {
      renewed += is_new ? 1 : 0;
    }
  }
  // A forgotten key can stay "seen" only as a false positive (ε = 1e-4 of ~1667).
  EXPECT_GE(renewed, keys.size() / 3 - 2);
  EXPECT_FALSE(f->Remove(RandomKeys(1, 6)[0]));
}

TEST(CountingBloomFilterTest, GrowsKeepsEveryKeyAndTheBound) {
  const double fp_rate = 1e-2;
  auto f = MustCreate(1000, fp_rate);
  auto plain = ScalableBloomFilter::Create({1000, fp_rate});
  ASSERT_TRUE(plain.ok());
  const auto keys = RandomKeys(30000, 7);
  std::vector<uint8_t> inserted(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    inserted[i] = f->InsertIfNew(keys[i]);
    (*plain)->InsertIfNew(keys[i]);
  }
  for (const KeyHash& k : keys) ASSERT_TRUE(f->MayContain(k));
  const CountingBloomStats stats = f->Stats();
  EXPECT_GE(stats.bloom.layers, 4u);
  EXPECT_EQ(stats.bloom.bytes, 4 * (*plain)->bytes());
  const auto others = RandomKeys(100000, 8);
  uint64_t counting_fp = 0, plain_fp = 0;
  for (const KeyHash& k : others) {
    counting_fp += f->MayContain(k) ? 1 : 0;
    plain_fp += (*plain)->MayContain(k) ? 1 : 0;
  }
  // The bound, with room for sampling noise (expected ≤ 1000 of 100000).
  EXPECT_LT(counting_fp, 1300u);
  // The same layouts as the plain filter: the same rate within sampling noise.
  EXPECT_NEAR(static_cast<double>(counting_fp), static_cast<double>(plain_fp),
              5 * std::sqrt(static_cast<double>(plain_fp)) + 20);
}

TEST(CountingBloomFilterTest, ExactlyOneOfRacingInsertsIsNew) {
  auto f = MustCreate(20000, 1e-3);
  const auto keys = RandomKeys(20000, 9);
  std::atomic<uint64_t> news{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      uint64_t mine = 0;
      for (size_t i = 0; i < keys.size(); ++i) {
        mine += f->InsertIfNew(keys[(i + t * 997) % keys.size()]) ? 1 : 0;
      }
      news += mine;
    });
  }
  for (std::thread& t : threads) t.join();
  // Each key new exactly once, but for keys that were false positives when inserted.
  EXPECT_LE(news.load(), keys.size());
  EXPECT_GE(news.load(), keys.size() - 60);
  for (const KeyHash& k : keys) ASSERT_TRUE(f->MayContain(k));
}

TEST(CountingBloomFilterTest, RemovesRacingWithInsertsLoseNoOtherKey) {
  auto f = MustCreate(20000, 1e-3);
  std::vector<KeyHash> kept;  // told new: a false positive holds no counters of its own
  for (const KeyHash& k : RandomKeys(10000, 10)) {
    if (f->InsertIfNew(k)) kept.push_back(k);
  }
  const auto churn = RandomKeys(10000, 11);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (size_t i = t; i < churn.size(); i += 4) {
          if (f->InsertIfNew(churn[i])) f->Remove(churn[i]);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const KeyHash& k : kept) ASSERT_TRUE(f->MayContain(k));
}

TEST(CountingBloomFilterTest, SnapshotRoundTripAndRefusals) {
  testing::ScratchDir dir("counting_snapshot");
  auto f = MustCreate(1000, 1e-3);
  const auto all = RandomKeys(5000, 12);  // grown: several layers
  std::vector<KeyHash> keys;  // those told new (a false positive was never added: not removable)
  for (const KeyHash& k : all) {
    if (f->InsertIfNew(k)) keys.push_back(k);
  }
  for (size_t i = 0; i < keys.size(); i += 2) ASSERT_TRUE(f->Remove(keys[i]));
  for (size_t i = 1; i < keys.size(); i += 2) ASSERT_TRUE(f->MayContain(keys[i]));
  const std::string path = (dir.path() / "bloom.snap").string();
  StateIdentity identity;
  identity.bytes[0] = 7;
  ASSERT_TRUE(f->Save(path, 42, identity).ok());
  uint64_t generation = 0;
  StateIdentity loaded_identity;
  auto loaded = CountingBloomFilter::Load(path, &generation, &loaded_identity);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(generation, 42u);
  EXPECT_EQ(loaded_identity, identity);
  EXPECT_EQ((*loaded)->bytes(), f->bytes());
  EXPECT_EQ((*loaded)->Stats().bloom.inserted, f->Stats().bloom.inserted);
  for (const KeyHash& k : RandomKeys(20000, 13))
    ASSERT_EQ((*loaded)->MayContain(k), f->MayContain(k));
  for (size_t i = 1; i < keys.size(); i += 2) ASSERT_TRUE((*loaded)->MayContain(keys[i]));

  // A plain filter refuses the counting snapshot, and the counting filter a plain one.
  auto as_plain = ScalableBloomFilter::Load(path);
  ASSERT_FALSE(as_plain.ok());
  EXPECT_EQ(as_plain.status().code(), StatusCode::kCorruption);
  EXPECT_NE(as_plain.status().message().find("counting"), std::string::npos);
  auto plain = ScalableBloomFilter::Create({1000, 1e-3});
  const std::string plain_path = (dir.path() / "plain.snap").string();
  ASSERT_TRUE((*plain)->Save(plain_path).ok());
  auto as_counting = CountingBloomFilter::Load(plain_path);
  ASSERT_FALSE(as_counting.ok());
  EXPECT_EQ(as_counting.status().code(), StatusCode::kCorruption);
  EXPECT_NE(as_counting.status().message().find(plain_path), std::string::npos);

  // Truncated and damaged: Corruption naming the file.
  const std::string bytes = testing::ReadFile(path);
  testing::WriteFile(path, bytes.substr(0, bytes.size() - 100));
  auto truncated = CountingBloomFilter::Load(path);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), StatusCode::kCorruption);
  EXPECT_NE(truncated.status().message().find(path), std::string::npos);
  std::string damaged = bytes;
  damaged[damaged.size() - 1000] ^= 0x10;
  testing::WriteFile(path, damaged);
  auto bad = CountingBloomFilter::Load(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find("checksum"), std::string::npos);
}

}  // namespace
}  // namespace urlsieve
