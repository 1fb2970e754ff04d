// The contract every ContentSeenSet (dedup/content/content_seen_set.h) keeps, as one
// value-parameterized suite, ContentSeenSetContractTest: exact, near and first verdicts, re-fetches
// (the same id), Forget, durability across a reopen, validation, and exactly one first among
// threads racing on one fingerprint.
//
// An implementation is a ContentSeenSetImplementation: a name and a factory that, given a scratch
// directory, makes a ContentSeenSetStore. A store opens the set (Open: the first call gives an
// empty set; later calls, after the previous set was destroyed, give the set again with what
// Persist made durable) and persists it (Local: Checkpoint inside a transaction of its SQLite file,
// then COMMIT; a shared set whose every change is durable at once: nothing).
//
// Instantiate it in ONE test file per test binary (this header defines the tests):
//   INSTANTIATE_TEST_SUITE_P(Redis, ContentSeenSetContractTest,
//                            ::testing::Values(ContentSeenSetImplementation{"Redis", MakeStore}),
//                            ContentSeenSetImplementationName);
// Thread-safety: a test fixture; one test thread (the concurrency test joins its own threads).
#ifndef URLSIEVE_TESTS_DEDUP_CONTENT_SEEN_SET_CONTRACT_H_
#define URLSIEVE_TESTS_DEDUP_CONTENT_SEEN_SET_CONTRACT_H_

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "dedup/content/content_seen_set.h"
#include "dedup/content/local_content_seen_set.h"  // ContentSeenOptions
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {

class ContentSeenSetStore {
 public:
  virtual ~ContentSeenSetStore() = default;
  // The set (see above). Every call of one store opens the same set.
  virtual Result<std::unique_ptr<ContentSeenSet>> Open(const ContentSeenOptions& options) = 0;
  // Makes what `set` holds durable, so that Open after the set is destroyed gives the same
  // verdicts.
  virtual Status Persist(ContentSeenSet& set) = 0;
};

struct ContentSeenSetImplementation {
  std::string name;
  std::function<std::unique_ptr<ContentSeenSetStore>(const std::filesystem::path& scratch)> make;
  bool persistent = true;  // false: in memory only (the reopen tests are skipped)
};

inline void PrintTo(const ContentSeenSetImplementation& implementation, std::ostream* os) {
  *os << implementation.name;
}

inline std::string ContentSeenSetImplementationName(
    const ::testing::TestParamInfo<ContentSeenSetImplementation>& info) {
  return info.param.name;
}

class ContentSeenSetContractTest : public ::testing::TestWithParam<ContentSeenSetImplementation> {
 protected:
  using Kind = ContentVerdict::Kind;

  void SetUp() override { store_ = GetParam().make(scratch_.path()); }

  std::unique_ptr<ContentSeenSet> MustOpen(const ContentSeenOptions& options = {}) {
    auto set = store_->Open(options);
    EXPECT_TRUE(set.ok()) << set.status().ToString();
    return set.ok() ? std::move(*set) : nullptr;
  }

  static ContentCopy Copy(const std::string& id, const std::string& data = "") {
    return ContentCopy{id, data.empty() ? "warc:" + id : data};
  }
  static ContentFingerprint Fp(uint64_t digest, std::optional<uint64_t> simhash = std::nullopt) {
    return ContentFingerprint{digest, simhash};
  }
  static ContentVerdict MustTest(ContentSeenSet& set, const ContentFingerprint& fp,
                                 const ContentCopy& page) {
    auto verdict = set.Test(fp, page);
    EXPECT_TRUE(verdict.ok()) << verdict.status().ToString();
    return verdict.ok() ? *verdict : ContentVerdict{};
  }

  // "t<thread>r<round>", built by appends (GCC 12's -Wrestrict misfires on chained operator+).
  static std::string ThreadId(int thread, int round) {
    std::string id = "t";
    id += std::to_string(thread);
    id += 'r';
    id += std::to_string(round);
    return id;
  }

  ScratchDir scratch_{"content_seen"};
  std::unique_ptr<ContentSeenSetStore> store_;
};

// Simhashes far apart (distance >= 20) and near ones at known distances.
inline constexpr uint64_t kSimA = 0x0123456789abcdefULL;
inline constexpr uint64_t kSimB = 0xfedcba9876543210ULL;

TEST_P(ContentSeenSetContractTest, FirstThenExactNamesTheFirstCopy) {
  auto set = MustOpen();
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->size(), 0u);
  ContentVerdict first = MustTest(*set, Fp(1, kSimA), Copy("http://a.example/", "rec-a"));
  EXPECT_EQ(first.kind, Kind::kFirst);
  EXPECT_FALSE(first.refetch);
  EXPECT_EQ(set->size(), 1u);
  ContentVerdict exact = MustTest(*set, Fp(1, kSimA), Copy("http://b.example/", "rec-b"));
  EXPECT_EQ(exact.kind, Kind::kExact);
  EXPECT_EQ(exact.first.id, "http://a.example/");
  EXPECT_EQ(exact.first.data, "rec-a");
  // An exact copy is not stored: a third copy still names the first.
  ContentVerdict third = MustTest(*set, Fp(1), Copy("http://c.example/"));
  EXPECT_EQ(third.kind, Kind::kExact);
  EXPECT_EQ(third.first.id, "http://a.example/");
  EXPECT_EQ(set->size(), 1u);
  // Another digest without a simhash is a first.
  EXPECT_EQ(MustTest(*set, Fp(2), Copy("http://d.example/")).kind, Kind::kFirst);
  EXPECT_EQ(set->size(), 2u);
}

TEST_P(ContentSeenSetContractTest, NearWithinMaxDistanceStoresItsDigest) {
  auto set = MustOpen();
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->max_distance(), 3);
  EXPECT_EQ(MustTest(*set, Fp(10, kSimA), Copy("u1", "d1")).kind, Kind::kFirst);
  ContentVerdict near = MustTest(*set, Fp(11, kSimA ^ 0x13), Copy("u2", "d2"));  // 3 bits
  EXPECT_EQ(near.kind, Kind::kNear);
  EXPECT_EQ(near.distance, 3);
  EXPECT_EQ(near.first.id, "u1");
  EXPECT_EQ(near.first.data, "d1");
  EXPECT_EQ(set->size(), 2u);  // the near page's digest is stored
  // An exact copy of the near page names the near page.
  ContentVerdict exact = MustTest(*set, Fp(11, kSimA ^ 0x13), Copy("u3"));
  EXPECT_EQ(exact.kind, Kind::kExact);
  EXPECT_EQ(exact.first.id, "u2");
  // The near page's simhash is not stored: a page near it only (distance 3 from u2, 6 from u1)
  // is a first.
  EXPECT_EQ(MustTest(*set, Fp(12, kSimA ^ 0x13 ^ 0x700), Copy("u4")).kind, Kind::kFirst);
  // Far from everything stored: a first.
  EXPECT_EQ(MustTest(*set, Fp(13, kSimB ^ 0xf), Copy("u5")).kind, Kind::kFirst);
  // Identical visible text, another payload: near at distance 0.
  ContentVerdict zero = MustTest(*set, Fp(14, kSimB ^ 0xf), Copy("u6"));
  EXPECT_EQ(zero.kind, Kind::kNear);
  EXPECT_EQ(zero.distance, 0);
  EXPECT_EQ(zero.first.id, "u5");
}

TEST_P(ContentSeenSetContractTest, NearestFirstWins) {
  auto set = MustOpen();
  ASSERT_NE(set, nullptr);
  MustTest(*set, Fp(1, kSimA ^ 0x7), Copy("far"));     // distance 3 from kSimA
  MustTest(*set, Fp(2, kSimA ^ 0x100), Copy("near"));  // distance 1
  ContentVerdict verdict = MustTest(*set, Fp(3, kSimA), Copy("q"));
  EXPECT_EQ(verdict.kind, Kind::kNear);
  EXPECT_EQ(verdict.distance, 1);
  EXPECT_EQ(verdict.first.id, "near");
}

TEST_P(ContentSeenSetContractTest, MaxDistanceAndExactOnlyOptions) {
  ContentSeenOptions options;
  options.max_distance = 1;
  auto set = MustOpen(options);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->max_distance(), 1);
  MustTest(*set, Fp(1, kSimA), Copy("a"));
  EXPECT_EQ(MustTest(*set, Fp(2, kSimA ^ 3), Copy("b")).kind, Kind::kFirst);
  EXPECT_EQ(MustTest(*set, Fp(3, kSimA ^ 1), Copy("c")).kind, Kind::kNear);
}

TEST_P(ContentSeenSetContractTest, ExactOnlyIgnoresSimhashes) {
  ContentSeenOptions options;
  options.near = false;
  auto set = MustOpen(options);
  ASSERT_NE(set, nullptr);
  MustTest(*set, Fp(1, kSimA), Copy("a"));
  EXPECT_EQ(MustTest(*set, Fp(2, kSimA), Copy("b")).kind, Kind::kFirst);
  EXPECT_EQ(MustTest(*set, Fp(1, kSimB), Copy("c")).kind, Kind::kExact);
}

TEST_P(ContentSeenSetContractTest, SameIdIsARefetchAndChangesNothing) {
  auto set = MustOpen();
  ASSERT_NE(set, nullptr);
  MustTest(*set, Fp(1, kSimA), Copy("page", "first-record"));
  ContentVerdict again = MustTest(*set, Fp(1, kSimA), Copy("page", "second-record"));
  EXPECT_EQ(again.kind, Kind::kFirst);
  EXPECT_TRUE(again.refetch);
  // Changed a little since (another digest, a near simhash): still the same page.
  ContentVerdict changed = MustTest(*set, Fp(2, kSimA ^ 1), Copy("page", "third-record"));
  EXPECT_EQ(changed.kind, Kind::kFirst);
  EXPECT_TRUE(changed.refetch);
  EXPECT_EQ(set->size(), 1u);
  // Nothing changed: another page still names the first record.
  ContentVerdict other = MustTest(*set, Fp(1), Copy("other"));
  EXPECT_EQ(other.kind, Kind::kExact);
  EXPECT_EQ(other.first.data, "first-record");
  EXPECT_EQ(MustTest(*set, Fp(2), Copy("other2")).kind, Kind::kFirst);
}

TEST_P(ContentSeenSetContractTest, ForgetRemovesTheDigestAndSimhashOfThatIdOnly) {
  auto set = MustOpen();
  ASSERT_NE(set, nullptr);
  MustTest(*set, Fp(1, kSimA), Copy("a"));
  MustTest(*set, Fp(2, kSimA ^ 1), Copy("b"));  // near a: only its digest
  auto wrong = set->Forget(Fp(1, kSimA), "b");
  ASSERT_TRUE(wrong.ok()) << wrong.status().ToString();
  EXPECT_FALSE(*wrong);
  auto absent = set->Forget(Fp(99, kSimB), "a");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(*absent);
  auto forgot = set->Forget(Fp(1, kSimA), "a");
  ASSERT_TRUE(forgot.ok()) << forgot.status().ToString();
  EXPECT_TRUE(*forgot);
  EXPECT_EQ(set->size(), 1u);
  EXPECT_FALSE(*set->Forget(Fp(1, kSimA), "a"));
  // a's digest and simhash are gone: a copy of a is a first again, and becomes the stored first.
  EXPECT_EQ(MustTest(*set, Fp(3, kSimA ^ 2), Copy("c")).kind, Kind::kFirst);
  EXPECT_EQ(MustTest(*set, Fp(1, kSimA), Copy("d")).kind, Kind::kNear);
  // b's digest is still there.
  ContentVerdict b = MustTest(*set, Fp(2), Copy("e"));
  EXPECT_EQ(b.kind, Kind::kExact);
  EXPECT_EQ(b.first.id, "b");
  auto forgot_b = set->Forget(Fp(2, kSimA ^ 1), "b");
  ASSERT_TRUE(forgot_b.ok());
  EXPECT_TRUE(*forgot_b);
  EXPECT_EQ(MustTest(*set, Fp(2), Copy("f")).kind, Kind::kFirst);
}

TEST_P(ContentSeenSetContractTest, InvalidCopiesAreRejected) {
  auto set = MustOpen();
  ASSERT_NE(set, nullptr);
  auto expect_invalid = [&](const ContentCopy& page) {
    auto verdict = set->Test(Fp(5), page);
    ASSERT_FALSE(verdict.ok());
    EXPECT_EQ(verdict.status().code(), StatusCode::kInvalidArgument) << verdict.status().ToString();
  };
  expect_invalid(ContentCopy{"", "x"});
  expect_invalid(ContentCopy{std::string(4097, 'u'), "x"});
  expect_invalid(ContentCopy{std::string("a\0b", 3), "x"});
  expect_invalid(ContentCopy{"ok", std::string(4097, 'd')});
  EXPECT_EQ(set->size(), 0u);
  auto forget = set->Forget(Fp(5), "");
  ASSERT_FALSE(forget.ok());
  EXPECT_EQ(forget.status().code(), StatusCode::kInvalidArgument);
  // The limits themselves are fine, and binary data (with NUL) is kept as is.
  const std::string data = std::string("a\0b", 3) + std::string(4093, 'd');
  EXPECT_EQ(MustTest(*set, Fp(5), ContentCopy{std::string(4096, 'u'), data}).kind, Kind::kFirst);
  ContentVerdict copy = MustTest(*set, Fp(5), Copy("other"));
  EXPECT_EQ(copy.first.id, std::string(4096, 'u'));
  EXPECT_EQ(copy.first.data, data);
}

TEST_P(ContentSeenSetContractTest, ReopenGivesTheSameVerdicts) {
  if (!GetParam().persistent) GTEST_SKIP() << "in memory";
  std::vector<ContentVerdict> before;
  {
    auto set = MustOpen();
    ASSERT_NE(set, nullptr);
    MustTest(*set, Fp(1, kSimA), Copy("a", ""));
    MustTest(*set, Fp(2, kSimA ^ 3), Copy("b", std::string("\0bin", 4)));
    MustTest(*set, Fp(3, kSimB), Copy("c"));
    MustTest(*set, Fp(4), Copy("d"));
    ASSERT_TRUE(set->Forget(Fp(3, kSimB), "c").ok());
    ASSERT_TRUE(store_->Persist(*set).ok());
    // After the persist: stored and forgotten in memory, persisted by a second Persist.
    MustTest(*set, Fp(5, kSimB ^ 0x8000), Copy("e"));
    ASSERT_TRUE(*set->Forget(Fp(4), "d"));
    Status persisted = store_->Persist(*set);
    ASSERT_TRUE(persisted.ok()) << persisted.ToString();
  }
  auto set = MustOpen();
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->size(), 3u);  // 1, 2, 5
  ContentVerdict a = MustTest(*set, Fp(1), Copy("x1"));
  EXPECT_EQ(a.kind, Kind::kExact);
  EXPECT_EQ(a.first.id, "a");
  EXPECT_EQ(a.first.data, "warc:a");
  ContentVerdict b = MustTest(*set, Fp(2), Copy("x2"));
  EXPECT_EQ(b.kind, Kind::kExact);
  EXPECT_EQ(b.first.id, "b");
  EXPECT_EQ(b.first.data, std::string("\0bin", 4));
  ContentVerdict near = MustTest(*set, Fp(6, kSimA ^ 0x100), Copy("x3"));
  EXPECT_EQ(near.kind, Kind::kNear);
  EXPECT_EQ(near.first.id, "a");
  EXPECT_EQ(near.distance, 1);
  ContentVerdict e = MustTest(*set, Fp(7, kSimB), Copy("x4"));
  EXPECT_EQ(e.kind, Kind::kNear);
  EXPECT_EQ(e.first.id, "e");
  EXPECT_TRUE(MustTest(*set, Fp(1), Copy("a")).refetch);
  // Forgotten before the persists: firsts.
  EXPECT_EQ(MustTest(*set, Fp(3), Copy("x5")).kind, Kind::kFirst);
  EXPECT_EQ(MustTest(*set, Fp(4), Copy("x6")).kind, Kind::kFirst);
  // Forget survives a reopen too, of a copy persisted before.
  ASSERT_TRUE(*set->Forget(Fp(1, kSimA), "a"));
  ASSERT_TRUE(store_->Persist(*set).ok());
  set.reset();
  set = MustOpen();
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(MustTest(*set, Fp(1), Copy("y")).kind, Kind::kFirst);
}

// Threads test one fingerprint, each as another page: exactly one is first, the others name it.
TEST_P(ContentSeenSetContractTest, ExactlyOneFirstAmongRacingThreads) {
  auto set = MustOpen();
  ASSERT_NE(set, nullptr);
  constexpr int kThreads = 8;
  constexpr int kRounds = 50;
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<int> ready{0};
    std::vector<ContentVerdict> verdicts(kThreads);
    std::vector<Status> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        // Half test the digest alone, half with a near simhash: one first either way.
        // Far from the other rounds' simhashes (a random 64-bit step apart).
        const uint64_t sim = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(round + 1);
        auto verdict = set->Test(
            Fp(1000 + round, t % 2 ? std::optional<uint64_t>(sim ^ (t & 2)) : std::nullopt),
            Copy(ThreadId(t, round)));
        if (verdict.ok()) {
          verdicts[t] = *verdict;
        } else {
          errors[t] = verdict.status();
        }
      });
    }
    for (auto& thread : threads) thread.join();
    int firsts = 0;
    std::string first_id;
    for (int t = 0; t < kThreads; ++t) {
      ASSERT_TRUE(errors[t].ok()) << errors[t].ToString();
      if (verdicts[t].kind == Kind::kFirst) {
        ++firsts;
        first_id = ThreadId(t, round);
      }
    }
    ASSERT_EQ(firsts, 1) << "round " << round;
    for (int t = 0; t < kThreads; ++t) {
      if (verdicts[t].kind != Kind::kFirst) {
        EXPECT_EQ(verdicts[t].kind, Kind::kExact);
        EXPECT_EQ(verdicts[t].first.id, first_id);
      }
    }
  }
  EXPECT_EQ(set->size(), static_cast<uint64_t>(kRounds));
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_DEDUP_CONTENT_SEEN_SET_CONTRACT_H_
