// The contract every SeenSet (dedup/seen_set.h) keeps, as one value-parameterized test suite
// (tests/dedup/seen_set_test.cc): each implementation is a SeenSetImplementation, a factory that
// opens the set kept in a state directory the way the crawl (CrawlState) or a standalone
// SeenFilter does. The suite runs every test against every implementation.
//
// Adding an implementation (a Redis set, a time-aware one): write a factory and either add it to
// LocalImplementations() in seen_set_test.cc, or, in a test file of its own,
//   INSTANTIATE_TEST_SUITE_P(Redis, SeenSetContractTest,
//                            ::testing::Values(SeenSetImplementation{"Redis", true, false,
//                                                                    OpenRedis, true}),
//                            SeenSetImplementationName);
// A factory receives the open StateDir of a scratch directory (its state.db holds the checkpoint's
// transaction, whatever the set keeps elsewhere) and must give a set that survives a reopen of
// that directory with exactly what the last committed checkpoint (or Save) recorded.
//
// Thread-safety: a test fixture; one test thread (the concurrency test joins its own threads).
#ifndef URLSIEVE_TESTS_DEDUP_SEEN_SET_CONTRACT_H_
#define URLSIEVE_TESTS_DEDUP_SEEN_SET_CONTRACT_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "base/sqlite_db.h"
#include "dedup/state_dir.h"
#include "dedup/state_seen_set.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {

struct SeenSetImplementation {
  std::string name;
  bool persistent = true;  // false: in memory (the persistence tests are skipped)
  bool exact = false;      // never answers "seen" for a new key (no false positive)
  // Opens the set kept in `dir` (null for an in-memory set). `saves`: standalone, Save() commits
  // (false: the crawl's set, whose checkpoints its owner runs). `parameters` are those the state
  // was created with.
  std::function<Result<std::unique_ptr<StateSeenSet>>(StateDir* dir, bool saves,
                                                      const StateParameters& parameters)>
      open;
  // A set shared beyond the state directory (RedisSeenSet): its keys live elsewhere, shared with
  // other processes, so they cannot return to the last checkpoint when one process crashes (the
  // other processes' inserts since are not this state's to undo). Instead the crawl's set (saves
  // false) keeps a claim log: the keys told new after the last committed checkpoint come back,
  // after a crash, as UncommittedClaims (state_seen_set.h), and the tests check that. Its Save
  // commits nothing of the state's (the generation stays), and its identity is the shared set's
  // own, not the state directory's.
  bool shared = false;
  // A time-aware set (generational_seen_set.h, exact_seen_set.h): the state is created with this
  // revisit_after, and the factory gives the set a ManualClock that the tests never move.
  uint64_t revisit_after_s = 0;
  bool deletable = false;  // the state's Bloom filter counts (docs/features/forgetting.md,
                           // "Forgetting")
};

inline void PrintTo(const SeenSetImplementation& implementation, std::ostream* os) {
  *os << implementation.name;
}

inline std::string SeenSetImplementationName(
    const ::testing::TestParamInfo<SeenSetImplementation>& info) {
  return info.param.name;
}

class SeenSetContractTest : public ::testing::TestWithParam<SeenSetImplementation> {
 protected:
  // The set of the scratch state directory `name`: checkpointed (a transaction always open, the
  // checkpoints run by the test as CrawlState runs them) or standalone (Save).
  struct Opened {
    std::unique_ptr<StateDir> dir;  // null in memory
    std::unique_ptr<StateSeenSet> set;
    std::vector<SeenNotice> notices;
  };

  StateParameters Parameters() const {
    StateParameters p;
    p.capacity = 10000;
    p.fp_rate = 1e-3;
    p.exact = GetParam().exact;
    p.revisit_after_s = GetParam().revisit_after_s;
    // One generation, sized like the other sets' filter (capacity/G keys at fp_rate/(G+1)), so
    // that the concurrency test's 3000 keys meet no false positive here either.
    p.generations = p.revisit_after_s > 0 ? 1 : 0;
    p.deletable = GetParam().deletable;
    return p;
  }

  Result<Opened> Open(bool checkpointed, const std::string& name = "state") {
    Opened opened;
    if (GetParam().persistent) {
      StateDir::Options options;
      options.path = (scratch_.path() / name).string();
      options.requested = Parameters();
      options.checkpointed = checkpointed;
      auto dir = StateDir::Open(options, &opened.notices);
      if (!dir.ok()) return dir.status();
      opened.dir = std::move(*dir);
    }
    auto set = GetParam().open(opened.dir.get(), /*saves=*/!checkpointed, Parameters());
    if (!set.ok()) return set.status();
    opened.set = std::move(*set);
    if (opened.dir != nullptr) URLSIEVE_RETURN_IF_ERROR(opened.dir->OpenFirstTransaction());
    return opened;
  }

  Opened MustOpen(bool checkpointed, const std::string& name = "state") {
    auto opened = Open(checkpointed, name);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(*opened) : Opened();
  }

  // The checkpoint protocol of CrawlState: the set prepares inside the open transaction, the
  // generation is committed, the set finishes.
  static Status Checkpoint(Opened& s) {
    return s.dir->Checkpoint(
        [&](SqliteDb& db, uint64_t generation) { return s.set->PrepareCheckpoint(db, generation); },
        [&](uint64_t generation) { return s.set->CheckpointCommitted(generation); });
  }

  static std::string Key(int i) {
    return "http://h" + std::to_string(i % 13) + ".example/k/" + std::to_string(i);
  }
  // Inserts keys [from, to) one batch; returns how many were new.
  static int InsertRange(SeenSet& set, int from, int to) {
    std::vector<std::string> keys;
    for (int i = from; i < to; ++i) keys.push_back(Key(i));
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<uint8_t> is_new;
    Status status = set.InsertKeysIfNew(views, &is_new);
    EXPECT_TRUE(status.ok()) << status.ToString();
    int fresh = 0;
    for (uint8_t n : is_new) fresh += n;
    return fresh;
  }
  static int CountContained(const SeenSet& set, int from, int to) {
    int n = 0;
    for (int i = from; i < to; ++i) {
      auto r = set.Contains(Key(i));
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      n += r.ok() && *r ? 1 : 0;
    }
    return n;
  }

  ScratchDir scratch_{"urlsieve_seen_set"};
};

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_DEDUP_SEEN_SET_CONTRACT_H_
