// Every SeenSet implementation through one contract (tests/dedup/seen_set_contract.h): new and
// seen, batches with repeats, one "new" among racing threads, contains, stats, save and reopen,
// checkpoints and the crashes around their COMMIT, identity.
#include "dedup/seen_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "dedup/bloom/key_hash.h"
#include "dedup/bloom_seen_set.h"
#include "dedup/generational_seen_set.h"
#include "tests/dedup/seen_set_contract.h"

namespace urlsieve::testing {
namespace {

Result<std::unique_ptr<StateSeenSet>> OpenLocal(StateDir* dir, bool saves,
                                                const StateParameters& p) {
  if (dir == nullptr) {
    auto set = BloomSeenSet::InMemory(p.capacity, p.fp_rate, p.deletable);
    if (!set.ok()) return set.status();
    return std::unique_ptr<StateSeenSet>(std::move(*set));
  }
  StateSeenSetOptions options;
  options.saves = saves;
  std::vector<SeenNotice> notices;
  return OpenStateSeenSet(dir, options, &notices);  // exact when the state is
}

// The time-aware sets under a clock that stands still (their ageing: generational_seen_set_test.cc
// and exact_seen_set_test.cc).
ManualClock& ContractClock() {
  static ManualClock clock;
  return clock;
}

Result<std::unique_ptr<StateSeenSet>> OpenTimeAware(StateDir* dir, bool saves,
                                                    const StateParameters& p) {
  if (dir == nullptr) {
    auto set = GenerationalSeenSet::InMemory({p.capacity, p.fp_rate,
                                              std::chrono::seconds(p.revisit_after_s),
                                              p.generations, &ContractClock()});
    if (!set.ok()) return set.status();
    return std::unique_ptr<StateSeenSet>(std::move(*set));
  }
  StateSeenSetOptions options;
  options.saves = saves;
  options.clock = &ContractClock();
  std::vector<SeenNotice> notices;
  return OpenStateSeenSet(dir, options, &notices);  // the state has revisit_after
}

std::vector<SeenSetImplementation> LocalImplementations() {
  return {
      {"BloomInMemory", /*persistent=*/false, /*exact=*/false, OpenLocal},
      {"Bloom", /*persistent=*/true, /*exact=*/false, OpenLocal},
      {"BloomExact", /*persistent=*/true, /*exact=*/true, OpenLocal},
      {"GenerationalInMemory", /*persistent=*/false, /*exact=*/false, OpenTimeAware,
       /*shared=*/false, /*revisit_after_s=*/7 * 24 * 3600},
      {"Generational", /*persistent=*/true, /*exact=*/false, OpenTimeAware, /*shared=*/false,
       /*revisit_after_s=*/7 * 24 * 3600},
      {"ExactTimeAware", /*persistent=*/true, /*exact=*/true, OpenTimeAware, /*shared=*/false,
       /*revisit_after_s=*/7 * 24 * 3600},
      {"BloomDeletableInMemory", /*persistent=*/false, /*exact=*/false, OpenLocal,
       /*shared=*/false, /*revisit_after_s=*/0, /*deletable=*/true},
      {"BloomDeletable", /*persistent=*/true, /*exact=*/false, OpenLocal, /*shared=*/false,
       /*deletable=*/true},
  };
}

INSTANTIATE_TEST_SUITE_P(Local, SeenSetContractTest, ::testing::ValuesIn(LocalImplementations()),
                         SeenSetImplementationName);

TEST(SeenSetHashTest, IsTheLibrarysKeyHash) {
  for (std::string_view key : {"", "http://example.com/", "http://h.example/a?b=c"}) {
    EXPECT_EQ(SeenSet::Hash(key), HashKey(key)) << key;
  }
  EXPECT_NE(SeenSet::Hash("http://a.example/"), SeenSet::Hash("http://b.example/"));
}

TEST_P(SeenSetContractTest, ANewKeyIsNewOnceAndThenContained) {
  for (bool checkpointed : {false, true}) {
    SCOPED_TRACE(checkpointed);
    Opened s = MustOpen(checkpointed, checkpointed ? "checkpointed" : "standalone");
    ASSERT_NE(s.set, nullptr);
    const std::string key = Key(1);
    auto contained = s.set->Contains(key);
    ASSERT_TRUE(contained.ok());
    EXPECT_FALSE(*contained);
    EXPECT_EQ(InsertRange(*s.set, 1, 2), 1);
    EXPECT_EQ(InsertRange(*s.set, 1, 2), 0);
    contained = s.set->Contains(key);
    ASSERT_TRUE(contained.ok());
    EXPECT_TRUE(*contained);
    // The same through the hashed call, with the caller's hash.
    const std::string_view view = key;
    const KeyHash hash = SeenSet::Hash(key);
    bool is_new = true;
    ASSERT_TRUE(s.set->InsertHashedIfNew({&view, 1}, {&hash, 1}, {&is_new, 1}).ok());
    EXPECT_FALSE(is_new);
    auto one = s.set->InsertHashedKeyIfNew(view, hash);
    ASSERT_TRUE(one.ok());
    EXPECT_FALSE(*one);
    const std::string other = Key(2);
    one = s.set->InsertHashedKeyIfNew(other, SeenSet::Hash(other));
    ASSERT_TRUE(one.ok());
    EXPECT_TRUE(*one);
    auto hashed = s.set->ContainsHashed(view, hash);
    ASSERT_TRUE(hashed.ok());
    EXPECT_TRUE(*hashed);
  }
}

TEST_P(SeenSetContractTest, ABatchTellsEachKeyNewAtItsFirstOccurrenceOnly) {
  Opened s = MustOpen(/*checkpointed=*/true);
  ASSERT_NE(s.set, nullptr);
  const std::vector<std::string> keys = {Key(1), Key(2), Key(1), Key(3), Key(2), Key(1)};
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<uint8_t> is_new;
  ASSERT_TRUE(s.set->InsertKeysIfNew(views, &is_new).ok());
  EXPECT_EQ(is_new, (std::vector<uint8_t>{1, 1, 0, 1, 0, 0}));
  ASSERT_TRUE(s.set->InsertKeysIfNew(views, &is_new).ok());
  EXPECT_EQ(is_new, (std::vector<uint8_t>(6, 0)));
  std::vector<uint8_t> none;
  ASSERT_TRUE(s.set->InsertKeysIfNew({}, &none).ok());
  EXPECT_TRUE(none.empty());
}

// Invariant 5: threads racing on the same keys, in batches of different sizes and orders: each
// key is new for exactly one of them.
TEST_P(SeenSetContractTest, ExactlyOneOfManyThreadsIsToldNew) {
  Opened s = MustOpen(/*checkpointed=*/false);
  ASSERT_NE(s.set, nullptr);
  constexpr int kKeys = 3000;
  constexpr int kThreads = 4;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) keys.push_back(Key(i));
  std::vector<std::atomic<int>> told_new(kKeys);
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const int batch = 1 + t * 37;  // 1 (InsertHashedKeyIfNew), 38, 75, 112
      std::vector<int> order(kKeys);
      for (int i = 0; i < kKeys; ++i) order[i] = (t % 2 == 0) ? i : kKeys - 1 - i;
      std::vector<std::string_view> views;
      std::vector<int> ids;
      std::vector<uint8_t> is_new;
      for (int begin = 0; begin < kKeys; begin += batch) {
        views.clear();
        ids.clear();
        for (int i = begin; i < std::min(kKeys, begin + batch); ++i) {
          views.push_back(keys[order[i]]);
          ids.push_back(order[i]);
        }
        if (batch == 1) {
          auto one = s.set->InsertHashedKeyIfNew(views[0], SeenSet::Hash(views[0]));
          if (!one.ok()) failed = true;
          is_new.assign(1, one.ok() && *one ? 1 : 0);
        } else if (!s.set->InsertKeysIfNew(views, &is_new).ok()) {
          failed = true;
        }
        for (size_t j = 0; j < ids.size() && j < is_new.size(); ++j) {
          if (is_new[j]) ++told_new[ids[j]];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(failed);
  int wrong = 0;
  for (int i = 0; i < kKeys; ++i) wrong += told_new[i] == 1 ? 0 : 1;
  // A Bloom false positive can make a key "seen" for everyone; with 3000 keys in a filter sized
  // for 10000 at 1e-3 there is none here, and an exact set never has one.
  EXPECT_EQ(wrong, 0);
}

TEST_P(SeenSetContractTest, StatsCountTheKeysAndTheGeneration) {
  Opened s = MustOpen(/*checkpointed=*/true);
  ASSERT_NE(s.set, nullptr);
  EXPECT_EQ(InsertRange(*s.set, 0, 100), 100);
  EXPECT_EQ(InsertRange(*s.set, 50, 150), 50);
  SeenStats stats = s.set->Stats();
  EXPECT_EQ(stats.capacity, 10000u);
  EXPECT_EQ(stats.fp_rate, 1e-3);
  EXPECT_EQ(stats.exact, GetParam().exact);
  EXPECT_EQ(stats.bloom_inserted, 150u);
  EXPECT_GT(stats.bloom_bytes, 0u);
  EXPECT_EQ(stats.generation, 0u);
  if (GetParam().exact) {
    EXPECT_EQ(stats.stored_keys, 150u);
    EXPECT_EQ(stats.maybe_lookups, 50u);  // the second batch's repeats were confirmed
    EXPECT_EQ(stats.false_positives, 0u);
  }
  if (!GetParam().persistent) return;
  ASSERT_TRUE(Checkpoint(s).ok());
  EXPECT_EQ(s.set->Stats().generation, 1u);
  EXPECT_EQ(s.set->Stats().identity, s.set->identity());
}

TEST_P(SeenSetContractTest, SaveMakesEverythingDurable) {
  if (!GetParam().persistent) {
    Opened s = MustOpen(false);
    ASSERT_NE(s.set, nullptr);
    EXPECT_TRUE(s.set->Save().ok());  // nothing to do in memory
    GTEST_SKIP() << "in memory: nothing persists";
  }
  uint64_t saved_generation = 0;
  {
    Opened s = MustOpen(/*checkpointed=*/false);
    ASSERT_NE(s.set, nullptr);
    EXPECT_EQ(InsertRange(*s.set, 0, 60), 60);
    ASSERT_TRUE(s.set->Save().ok());
    saved_generation = s.set->Stats().generation;
    if (!GetParam().shared) {  // a shared set has no generations
      EXPECT_GT(saved_generation, 0u);
    }
    EXPECT_EQ(InsertRange(*s.set, 60, 80), 20);
    ASSERT_TRUE(s.set->Save().ok());
    if (!GetParam().shared) {
      EXPECT_GT(s.set->Stats().generation, saved_generation);
    }
    saved_generation = s.set->Stats().generation;
  }
  Opened s = MustOpen(false);
  ASSERT_NE(s.set, nullptr);
  EXPECT_TRUE(s.notices.empty()) << s.notices[0].text;
  EXPECT_EQ(s.set->Stats().generation, saved_generation);
  EXPECT_EQ(CountContained(*s.set, 0, 80), 80);
  EXPECT_EQ(CountContained(*s.set, 80, 120), 0);
  EXPECT_EQ(InsertRange(*s.set, 0, 80), 0);
}

// The crawl's set: its checkpoints are its owner's, so its own Save is refused.
TEST_P(SeenSetContractTest, SaveOfASetCheckpointedByItsOwnerIsRefused) {
  if (!GetParam().persistent) GTEST_SKIP() << "in memory: no owner";
  Opened s = MustOpen(/*checkpointed=*/true);
  ASSERT_NE(s.set, nullptr);
  InsertRange(*s.set, 0, 10);
  EXPECT_EQ(s.set->Save().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.set->Stats().generation, 0u);
}

TEST_P(SeenSetContractTest, ACheckpointKeepsWhatItCommittedAndACrashLosesOnlyTheRest) {
  if (!GetParam().persistent) {
    Opened s = MustOpen(true);
    ASSERT_NE(s.set, nullptr);
    auto db = SqliteDb::Open((scratch_.path() / "other.db").string());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ(s.set->PrepareCheckpoint(**db, 1).code(), StatusCode::kFailedPrecondition);
    GTEST_SKIP() << "in memory: nothing persists";
  }
  {
    Opened s = MustOpen(/*checkpointed=*/true);
    ASSERT_NE(s.set, nullptr);
    EXPECT_EQ(InsertRange(*s.set, 0, 40), 40);
    ASSERT_TRUE(Checkpoint(s).ok());  // 1: the first writes a whole snapshot
    EXPECT_EQ(InsertRange(*s.set, 40, 60), 20);
    ASSERT_TRUE(Checkpoint(s).ok());  // 2: usually only the keys new since 1
    ASSERT_TRUE(Checkpoint(s).ok());  // 3: nothing new
    EXPECT_EQ(s.set->Stats().generation, 3u);
    EXPECT_EQ(InsertRange(*s.set, 60, 100), 40);
    // Destroyed without a checkpoint: the crash.
  }
  Opened s = MustOpen(true);
  ASSERT_NE(s.set, nullptr);
  EXPECT_TRUE(s.notices.empty()) << s.notices[0].text;
  EXPECT_EQ(s.set->Stats().generation, 3u);
  EXPECT_EQ(CountContained(*s.set, 0, 60), 60);
  if (GetParam().shared) {
    // The keys stay; the 40 told new after checkpoint 3 come back as the crawl's claims.
    EXPECT_EQ(CountContained(*s.set, 60, 100), 40);
    EXPECT_EQ(s.set->Stats().bloom_inserted, 100u);
    auto claims = s.set->UncommittedClaims();
    ASSERT_TRUE(claims.ok()) << claims.status().ToString();
    std::vector<std::string> expected;
    for (int i = 60; i < 100; ++i) expected.push_back(Key(i));
    std::sort(expected.begin(), expected.end());
    std::sort(claims->begin(), claims->end());
    EXPECT_EQ(*claims, expected);
    EXPECT_EQ(InsertRange(*s.set, 50, 100), 0);
    return;
  }
  EXPECT_EQ(CountContained(*s.set, 60, 100), 0);
  EXPECT_EQ(s.set->Stats().bloom_inserted, 60u);
  if (GetParam().exact) {
    EXPECT_EQ(s.set->Stats().stored_keys, 60u);
  }
  EXPECT_EQ(InsertRange(*s.set, 50, 100), 40);
}

// A crash after PrepareCheckpoint but before the owner's COMMIT: the set opens at the generation
// before, without the keys of the checkpoint that never happened, and its next checkpoint (of the
// same generation) works. Both kinds of prepare: the first checkpoint (a whole snapshot) and a
// later one (an appended record).
TEST_P(SeenSetContractTest, ACrashBetweenPrepareAndCommitRollsBackToTheLastCheckpoint) {
  if (!GetParam().persistent) GTEST_SKIP() << "in memory: nothing persists";
  for (int committed_before : {0, 2}) {
    SCOPED_TRACE(committed_before);
    const std::string name = "state" + std::to_string(committed_before);
    {
      Opened s = MustOpen(/*checkpointed=*/true, name);
      ASSERT_NE(s.set, nullptr);
      for (int g = 1; g <= committed_before; ++g) {
        EXPECT_EQ(InsertRange(*s.set, g * 10, g * 10 + 10), 10);
        ASSERT_TRUE(Checkpoint(s).ok());
      }
      EXPECT_EQ(InsertRange(*s.set, 100, 130), 30);
      ASSERT_TRUE(s.set->PrepareCheckpoint(s.dir->db(), committed_before + 1).ok());
      // The crash: no COMMIT, no CheckpointCommitted.
    }
    Opened s = MustOpen(true, name);
    ASSERT_NE(s.set, nullptr);
    EXPECT_TRUE(s.notices.empty()) << s.notices[0].text;
    EXPECT_EQ(s.set->Stats().generation, static_cast<uint64_t>(committed_before));
    EXPECT_EQ(CountContained(*s.set, 10, 10 + 10 * committed_before), 10 * committed_before);
    if (GetParam().shared) {
      // The 30 keys stay, and come back as claims until a checkpoint commits.
      EXPECT_EQ(CountContained(*s.set, 100, 130), 30);
      auto claims = s.set->UncommittedClaims();
      ASSERT_TRUE(claims.ok()) << claims.status().ToString();
      EXPECT_EQ(claims->size(), 30u);
      EXPECT_EQ(InsertRange(*s.set, 100, 110), 0);
    } else {
      EXPECT_EQ(CountContained(*s.set, 100, 130), 0);
      EXPECT_EQ(InsertRange(*s.set, 100, 110), 10);
    }
    ASSERT_TRUE(Checkpoint(s).ok());
    EXPECT_EQ(s.set->Stats().generation, static_cast<uint64_t>(committed_before + 1));
    if (GetParam().shared) {
      s.set.reset();
      s.dir.reset();
      Opened reopened = MustOpen(true, name);
      ASSERT_NE(reopened.set, nullptr);
      auto claims = reopened.set->UncommittedClaims();
      ASSERT_TRUE(claims.ok()) << claims.status().ToString();
      EXPECT_TRUE(claims->empty());
    }
  }
}

TEST_P(SeenSetContractTest, EachStateHasItsOwnIdentity) {
  if (!GetParam().persistent) {
    Opened s = MustOpen(false);
    ASSERT_NE(s.set, nullptr);
    EXPECT_TRUE(s.set->identity().IsZero());
    return;
  }
  StateIdentity first;
  {
    Opened s = MustOpen(/*checkpointed=*/true, "one");
    ASSERT_NE(s.set, nullptr);
    first = s.set->identity();
    EXPECT_FALSE(first.IsZero());
    EXPECT_EQ(s.set->Stats().identity, first);
    if (!GetParam().shared) {
      EXPECT_EQ(first, s.dir->identity());
    }
    InsertRange(*s.set, 0, 5);
    ASSERT_TRUE(Checkpoint(s).ok());
  }
  Opened again = MustOpen(true, "one");
  ASSERT_NE(again.set, nullptr);
  EXPECT_EQ(again.set->identity(), first);
  Opened other = MustOpen(true, "two");
  ASSERT_NE(other.set, nullptr);
  EXPECT_NE(other.set->identity(), first);
}

}  // namespace
}  // namespace urlsieve::testing
