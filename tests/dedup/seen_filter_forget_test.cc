// Forgetting (docs/features/forgetting.md, "Forgetting"): SeenFilter::Forget over a deletable
// (counting) Bloom filter in memory and in a state directory — durable under Save, across reopen,
// under the owner's checkpoint protocol and through the delta log's removal records — a plain
// filter's refusal, and the [trust] cases of the files that carry the counters.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dedup/bloom/bloom_delta_log.h"
#include "dedup/seen_filter.h"
#include "tests/dedup/seen_state.h"
#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

std::string Url(int i) {
  return "http://h" + std::to_string(i % 17) + ".example/p/" + std::to_string(i);
}

class SeenFilterForgetTest : public ::testing::Test {
 protected:
  SeenFilterOptions Options(bool deletable = true) {
    SeenFilterOptions o;
    o.capacity = 10000;
    o.fp_rate = 1e-4;
    o.state_dir = (dir_.path() / "state").string();
    o.deletable = deletable;
    return o;
  }
  static std::unique_ptr<SeenFilter> MustOpen(const SeenFilterOptions& o) {
    auto f = SeenFilter::Open(o);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(*f) : nullptr;
  }
  static void InsertRange(SeenFilter& f, int from, int to) {
    for (int i = from; i < to; ++i) {
      auto r = f.InsertIfNew(Url(i));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_TRUE(*r) << Url(i);
    }
  }
  // Forgets every `step`-th URL of [from, to): each must have been there.
  static void ForgetEvery(SeenFilter& f, int from, int to, int step) {
    for (int i = from; i < to; i += step) {
      auto r = f.Forget(Url(i));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_TRUE(*r) << Url(i);
    }
  }
  // The URLs of [from, to) that are seen; forgotten ones (i % step == from % step) must be new
  // (but for a false positive at ε = 1e-4), the others seen.
  static void ExpectForgotten(const SeenFilter& f, int from, int to, int step) {
    int still_seen = 0;
    for (int i = from; i < to; ++i) {
      auto r = f.Contains(Url(i));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      if ((i - from) % step == 0) {
        still_seen += *r ? 1 : 0;
      } else {
        ASSERT_TRUE(*r) << "a URL that was never forgotten is new: " << Url(i);
      }
    }
    EXPECT_LE(still_seen, 1);
  }

  testing::ScratchDir dir_{"forget"};
};

TEST_F(SeenFilterForgetTest, InMemoryDeletableForgets) {
  SeenFilterOptions o = Options();
  o.state_dir.clear();
  auto f = MustOpen(o);
  ASSERT_NE(f, nullptr);
  InsertRange(*f, 0, 2000);
  ForgetEvery(*f, 0, 2000, 3);
  ExpectForgotten(*f, 0, 2000, 3);
  // Forgotten URLs are new again, exactly once.
  for (int i = 0; i < 2000; i += 3) {
    auto r = f->InsertIfNew(Url(i));
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(*r) << Url(i);
    EXPECT_FALSE(*f->InsertIfNew(Url(i)));
  }
  // Never inserted: "absent", and canonicalized as an insert is ("HTTP://H1.example:80/p/1").
  auto absent = f->Forget("http://never.example/");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(*absent);
  ASSERT_TRUE(*f->InsertIfNew("http://case.example/p"));
  auto canon = f->Forget("HTTP://CASE.example:80/p#frag");
  ASSERT_TRUE(canon.ok());
  EXPECT_TRUE(*canon);
  EXPECT_TRUE(*f->InsertIfNew("http://case.example/p"));
  // An invalid URL is InvalidArgument, and changes nothing.
  auto invalid = f->Forget("not a url");
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SeenFilterForgetTest, BatchReportsEachUrl) {
  SeenFilterOptions o = Options();
  o.state_dir.clear();
  auto f = MustOpen(o);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(*f->InsertIfNew("http://a.example/"));
  std::vector<std::string_view> urls = {"http://a.example/", "ftp://bad/", "http://b.example/"};
  std::vector<ForgetResult> results;
  ASSERT_TRUE(f->ForgetBatch(urls, &results).ok());
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].outcome, ForgetOutcome::kForgotten);
  EXPECT_EQ(results[1].outcome, ForgetOutcome::kInvalid);
  EXPECT_FALSE(results[1].error.ok());
  EXPECT_EQ(results[2].outcome, ForgetOutcome::kNotThere);
}

TEST_F(SeenFilterForgetTest, PlainBloomFilterRefusesNamingTheOptions) {
  for (bool in_memory : {true, false}) {
    SeenFilterOptions o = Options(/*deletable=*/false);
    if (in_memory) o.state_dir.clear();
    auto f = MustOpen(o);
    ASSERT_NE(f, nullptr);
    ASSERT_TRUE(*f->InsertIfNew(Url(1)));
    auto r = f->Forget(Url(1));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(r.status().message().find("--exact"), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().message().find("--deletable"), std::string::npos);
    EXPECT_TRUE(*f->Contains(Url(1))) << "a refused forget changed the filter";
  }
}

TEST_F(SeenFilterForgetTest, DeletableIsStoredAndRefusedWithExact) {
  {
    auto f = MustOpen(Options());
    ASSERT_NE(f, nullptr);
    InsertRange(*f, 0, 100);
    ASSERT_TRUE(f->Save().ok());
  }
  // Reopened without asking for it: the state stays deletable, and says so.
  auto f = MustOpen(Options(/*deletable=*/false));
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->options().deletable);
  bool noticed = false;
  for (const SeenNotice& n : f->notices()) noticed |= n.text.find("deletable") != std::string::npos;
  EXPECT_TRUE(noticed);
  EXPECT_TRUE(*f->Forget(Url(5)));
  f.reset();

  SeenFilterOptions exact = Options();
  exact.state_dir = (dir_.path() / "exact").string();
  exact.exact = true;
  auto refused = SeenFilter::Open(exact);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir_.path() / "exact" / "state.db"));
}

TEST_F(SeenFilterForgetTest, ForgettingIsDurableUnderSaveAndReopen) {
  {
    auto f = MustOpen(Options());
    ASSERT_NE(f, nullptr);
    InsertRange(*f, 0, 3000);
    ASSERT_TRUE(f->Save().ok());  // a full snapshot (the log starts after it)
    ForgetEvery(*f, 0, 1000, 4);
    ASSERT_TRUE(f->Save().ok());  // a delta record with removals
    InsertRange(*f, 3000, 3500);
    ForgetEvery(*f, 1000, 2000, 4);
    ASSERT_TRUE(f->Save().ok());  // adds and removals in one record
    EXPECT_GT(fs::file_size(dir_.path() / "state" / "bloom.delta"), BloomDeltaLog::kHeaderBytes);
  }
  auto f = MustOpen(Options());
  ASSERT_NE(f, nullptr);
  ExpectForgotten(*f, 0, 2000, 4);
  for (int i = 2000; i < 3500; ++i) ASSERT_TRUE(*f->Contains(Url(i))) << Url(i);
  // Forgotten and not saved: not forgotten after a reopen.
  ForgetEvery(*f, 2000, 3000, 4);
  f.reset();
  f = MustOpen(Options());
  ASSERT_NE(f, nullptr);
  for (int i = 2000; i < 3000; ++i) ASSERT_TRUE(*f->Contains(Url(i))) << Url(i);
}

TEST_F(SeenFilterForgetTest, ManySavesThroughCompactionKeepWhatWasForgotten) {
  auto f = MustOpen(Options());
  ASSERT_NE(f, nullptr);
  // Rounds of inserts and forgets, each saved; the log compacts into snapshots on the way.
  for (int round = 0; round < 12; ++round) {
    InsertRange(*f, round * 1000, round * 1000 + 1000);
    ForgetEvery(*f, round * 1000, round * 1000 + 1000, 5);
    ASSERT_TRUE(f->Save().ok());
  }
  f.reset();
  f = MustOpen(Options());
  ASSERT_NE(f, nullptr);
  ExpectForgotten(*f, 0, 12000, 5);
  for (int i = 0; i < 12000; i += 5) EXPECT_TRUE(*f->InsertIfNew(Url(i))) << Url(i);
}

// The crawl's protocol (seen_set.h, "Durability"): the owner's checkpoint carries the removals; a
// COMMIT that never happens leaves the URLs remembered.
TEST_F(SeenFilterForgetTest, OwnerCheckpointCarriesTheRemovals) {
  SeenFilterOptions o = Options();
  o.checkpointed = true;
  {
    auto state = testing::SeenState::Open(o);
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    InsertRange(*(*state)->filter, 0, 1000);
    ASSERT_TRUE((*state)->Checkpoint().ok());
    ForgetEvery(*(*state)->filter, 0, 1000, 2);
    ASSERT_TRUE((*state)->Checkpoint().ok());
    // Forgotten after the last checkpoint: lost with the process, as inserts are.
    ForgetEvery(*(*state)->filter, 1, 1000, 2);
  }
  auto state = testing::SeenState::Open(o);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  ExpectForgotten(*(*state)->filter, 0, 1000, 2);
}

// Exact mode (the exact store deletes the record; ExactSeenSet): the Bloom filter still says
// "maybe", the store "no", and the URL is new — in memory of the process and after a reopen.
TEST_F(SeenFilterForgetTest, ExactModeForgetsByDeletingTheRecord) {
  SeenFilterOptions o = Options(/*deletable=*/false);
  o.exact = true;
  {
    auto f = MustOpen(o);
    ASSERT_NE(f, nullptr);
    InsertRange(*f, 0, 1000);
    ForgetEvery(*f, 0, 1000, 3);
    for (int i = 0; i < 1000; ++i) {
      ASSERT_EQ(*f->Contains(Url(i)), i % 3 != 0) << Url(i);  // exact: no false positive
    }
    EXPECT_FALSE(*f->Forget(Url(0)));  // already forgotten
    ASSERT_TRUE(f->Save().ok());
  }
  auto f = MustOpen(o);
  ASSERT_NE(f, nullptr);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(*f->Contains(Url(i)), i % 3 != 0) << Url(i);
  for (int i = 0; i < 1000; i += 3) ASSERT_TRUE(*f->InsertIfNew(Url(i))) << Url(i);
}

TEST_F(SeenFilterForgetTest, DamagedFilesAreCorruptionNamingTheFile) {
  const fs::path state = dir_.path() / "state";
  {
    auto f = MustOpen(Options());
    ASSERT_NE(f, nullptr);
    InsertRange(*f, 0, 500);
    ASSERT_TRUE(f->Save().ok());
    ForgetEvery(*f, 0, 500, 2);
    ASSERT_TRUE(f->Save().ok());
  }
  const std::string snap = testing::ReadFile(state / "bloom.snap");
  const std::string delta = testing::ReadFile(state / "bloom.delta");
  auto expect_corrupt = [&](const std::string& file) {
    auto f = SeenFilter::Open(Options());
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), StatusCode::kCorruption) << f.status().ToString();
    EXPECT_NE(f.status().message().find(file), std::string::npos) << f.status().ToString();
  };
  // The delta log's removal record, cut short and damaged.
  testing::WriteFile(state / "bloom.delta", delta.substr(0, delta.size() - 8));
  expect_corrupt("bloom.delta");
  std::string damaged = delta;
  damaged[damaged.size() - 20] ^= 1;
  testing::WriteFile(state / "bloom.delta", damaged);
  expect_corrupt("bloom.delta");
  testing::WriteFile(state / "bloom.delta", delta);
  // The counting snapshot, truncated and damaged.
  testing::WriteFile(state / "bloom.snap", snap.substr(0, snap.size() / 2));
  expect_corrupt("bloom.snap");
  damaged = snap;
  damaged[snap.size() - 10] ^= 4;
  testing::WriteFile(state / "bloom.snap", damaged);
  expect_corrupt("bloom.snap");
  // A plain filter's snapshot in a deletable state: foreign.
  {
    SeenFilterOptions plain = Options(/*deletable=*/false);
    plain.state_dir = (dir_.path() / "plain").string();
    auto f = MustOpen(plain);
    ASSERT_NE(f, nullptr);
    InsertRange(*f, 0, 10);
    ASSERT_TRUE(f->Save().ok());
  }
  testing::WriteFile(state / "bloom.snap", testing::ReadFile(dir_.path() / "plain" / "bloom.snap"));
  expect_corrupt("bloom.snap");
  // Restored: opens, and what was forgotten is still forgotten (nothing was changed meanwhile).
  testing::WriteFile(state / "bloom.snap", snap);
  auto f = MustOpen(Options());
  ASSERT_NE(f, nullptr);
  ExpectForgotten(*f, 0, 500, 2);
}

}  // namespace
}  // namespace urlsieve
