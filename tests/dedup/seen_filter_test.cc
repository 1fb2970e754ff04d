#include "dedup/seen_filter.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "base/sqlite_db.h"
#include "dedup/bloom/scalable_bloom_filter.h"
#include "tests/dedup/format1_state.h"
#include "tests/dedup/seen_state.h"
#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;

class SeenFilterTest : public ::testing::Test {
 protected:
  SeenFilterOptions Persistent(bool exact, bool checkpointed = false) {
    SeenFilterOptions o;
    o.capacity = 10000;
    o.fp_rate = 1e-3;
    o.state_dir = dir_.string();
    o.exact = exact;
    o.checkpointed = checkpointed;
    return o;
  }
  static std::unique_ptr<SeenFilter> MustOpen(const SeenFilterOptions& o) {
    auto f = SeenFilter::Open(o);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(*f) : nullptr;
  }
  static std::string Url(int i) {
    return "http://h" + std::to_string(i % 97) + ".example/p/" + std::to_string(i);
  }
  static bool Insert(SeenFilter& f, const std::string& url) {
    auto r = f.InsertIfNew(url);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && *r;
  }
  static bool Has(const SeenFilter& f, const std::string& url) {
    auto r = f.Contains(url);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && *r;
  }
  static bool HasNotice(const SeenFilter& f, std::string_view needle) {
    for (const auto& n : f.notices()) {
      if (n.text.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  testing::ScratchDir scratch_{"urlsieve_seen"};
  const fs::path dir_ = scratch_.path() / "state";  // created by the filter
};

TEST_F(SeenFilterTest, InMemoryDeduplicatesCanonicalSpellings) {
  auto f = MustOpen(SeenFilterOptions{});
  EXPECT_TRUE(Insert(*f, "http://Example.COM:80/a/./b#frag"));
  EXPECT_FALSE(Insert(*f, "http://example.com/a/b"));
  EXPECT_TRUE(Has(*f, "HTTP://example.com/a/b"));
  EXPECT_FALSE(Has(*f, "http://example.com/a/c"));
  auto bad = f->InsertIfNew("ftp://example.com/");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(f->Checkpoint().code(), StatusCode::kFailedPrecondition);
}

TEST_F(SeenFilterTest, BatchKeepsOrderAndReportsInvalidUrls) {
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    fs::remove_all(dir_);
    auto f = MustOpen(Persistent(exact));
    std::vector<std::string_view> urls = {"http://a.example/x", "not a url", "http://A.example/x",
                                          "http://a.example/y", "http://a.example/x#f"};
    std::vector<SeenResult> out;
    ASSERT_TRUE(f->InsertIfNewBatch(urls, &out).ok());
    ASSERT_EQ(out.size(), 5u);
    EXPECT_EQ(out[0].verdict, Verdict::kNew);
    EXPECT_EQ(out[1].verdict, Verdict::kInvalid);
    EXPECT_EQ(out[1].error.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(out[2].verdict, Verdict::kSeen);
    EXPECT_EQ(out[3].verdict, Verdict::kNew);
    EXPECT_EQ(out[4].verdict, Verdict::kSeen);
    ASSERT_TRUE(f->InsertIfNewBatch(urls, &out).ok());
    for (const auto& r : out) EXPECT_NE(r.verdict, Verdict::kNew);
    EXPECT_EQ(f->Stats().bloom_inserted, 2u);
  }
}

TEST_F(SeenFilterTest, InsertKeysIfNewTakesCanonicalKeys) {
  auto f = MustOpen(Persistent(true));
  std::vector<std::string_view> keys = {"http://a.example/", "http://b.example/",
                                        "http://a.example/"};
  std::vector<uint8_t> is_new;
  ASSERT_TRUE(f->InsertKeysIfNew(keys, &is_new).ok());
  EXPECT_EQ(is_new, (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_FALSE(Insert(*f, "HTTP://B.EXAMPLE"));
}

// A filter far too small for its load answers "maybe" constantly; the exact store must turn every
// one of those into the right verdict.
TEST_F(SeenFilterTest, ExactModeHasNoFalsePositivesWithATinyFilter) {
  SeenFilterOptions o = Persistent(true, /*checkpointed=*/true);
  o.capacity = 1000;
  o.fp_rate = 0.5;
  auto f = MustOpen(o);
  std::unordered_set<std::string> truth;
  std::mt19937_64 rng(7);
  constexpr int kTotal = 1'000'000, kBatch = 4096;
  std::vector<std::string> urls(kBatch);
  std::vector<std::string_view> views(kBatch);
  std::vector<SeenResult> out;
  int wrong = 0;
  for (int done = 0; done < kTotal; done += kBatch) {
    for (int i = 0; i < kBatch; ++i) {
      // About one in three URLs repeats an earlier one.
      const uint64_t id = rng() % (kTotal * 2 / 3);
      urls[i] = "http://h" + std::to_string(id % 1000) + ".example/" + std::to_string(id);
      views[i] = urls[i];
    }
    ASSERT_TRUE(f->InsertIfNewBatch(views, &out).ok());
    for (int i = 0; i < kBatch; ++i) {
      const bool is_new = truth.insert(urls[i]).second;
      wrong += (out[i].verdict == Verdict::kNew) != is_new ? 1 : 0;
    }
  }
  EXPECT_EQ(wrong, 0);
  const SeenStats s = f->Stats();
  EXPECT_EQ(s.stored_keys, truth.size());
  EXPECT_GT(s.false_positives, 10'000u) << "the filter was meant to be tiny";
  EXPECT_GT(s.maybe_lookups, s.false_positives);
}

void RaceSameUrls(SeenFilter& f, bool batch) {
  constexpr int kThreads = 8, kUrls = 300;
  std::vector<std::atomic<int>> new_count(kUrls);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      std::vector<std::string> urls;
      for (int i = 0; i < kUrls; ++i) {
        // Each thread walks the URLs from a different start so that collisions vary.
        const int u = (i + t * 37) % kUrls;
        urls.push_back("http://race.example/" + std::to_string(u));
      }
      if (batch) {
        std::vector<std::string_view> views(urls.begin(), urls.end());
        std::vector<SeenResult> out;
        for (size_t b = 0; b < views.size(); b += 16) {
          const size_t n = std::min<size_t>(16, views.size() - b);
          ASSERT_TRUE(f.InsertIfNewBatch(std::span(views).subspan(b, n), &out).ok());
          for (size_t i = 0; i < n; ++i) {
            if (out[i].verdict == Verdict::kNew) new_count[(b + i + t * 37) % kUrls]++;
          }
        }
      } else {
        for (int i = 0; i < kUrls; ++i) {
          auto r = f.InsertIfNew(urls[i]);
          ASSERT_TRUE(r.ok());
          if (*r) new_count[(i + t * 37) % kUrls]++;
        }
      }
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  for (int u = 0; u < kUrls; ++u) EXPECT_EQ(new_count[u].load(), 1) << "url " << u;
}

TEST_F(SeenFilterTest, ExactlyOneThreadIsToldNewBloomOnly) {
  auto f = MustOpen(SeenFilterOptions{});
  RaceSameUrls(*f, /*batch=*/false);
  auto g = MustOpen(SeenFilterOptions{});
  RaceSameUrls(*g, /*batch=*/true);
}

TEST_F(SeenFilterTest, ExactlyOneThreadIsToldNewExact) {
  SeenFilterOptions o = Persistent(true);
  o.capacity = 50;  // tiny: many "maybe" answers go to SQLite
  o.fp_rate = 0.3;
  auto f = MustOpen(o);
  RaceSameUrls(*f, /*batch=*/true);
  f.reset();
  fs::remove_all(dir_);
  o.checkpointed = true;
  f = MustOpen(o);
  RaceSameUrls(*f, /*batch=*/false);
}

TEST_F(SeenFilterTest, PersistsAcrossReopenInBothModes) {
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    fs::remove_all(dir_);
    {
      auto f = MustOpen(Persistent(exact));
      for (int i = 0; i < 100; ++i) EXPECT_TRUE(Insert(*f, Url(i)));
      ASSERT_TRUE(f->Save().ok());
    }
    auto f = MustOpen(Persistent(exact));
    EXPECT_TRUE(f->notices().empty()) << f->notices()[0].text;
    for (int i = 0; i < 100; ++i) EXPECT_FALSE(Insert(*f, Url(i)));
    EXPECT_TRUE(Insert(*f, Url(100)));
    EXPECT_EQ(f->Stats().bloom_inserted, 101u);
    if (exact) {
      EXPECT_EQ(f->Stats().stored_keys, 101u);
    }
  }
}

TEST_F(SeenFilterTest, ReusesStoredParameters) {
  SeenFilterOptions o = Persistent(false);
  o.capacity = 5000;
  o.fp_rate = 0.01;
  o.canonicalize.sort_query = true;
  MustOpen(o)->Save();
  auto f = MustOpen(Persistent(true));  // asks for other parameters, and exact mode
  EXPECT_EQ(f->options().capacity, 5000u);
  EXPECT_EQ(f->options().fp_rate, 0.01);
  EXPECT_FALSE(f->options().exact);
  EXPECT_TRUE(f->options().canonicalize.sort_query);
  EXPECT_TRUE(HasNotice(*f, "stored capacity 5000"));
  EXPECT_TRUE(HasNotice(*f, "Bloom-only"));
  EXPECT_TRUE(HasNotice(*f, "canonicalizer"));
  EXPECT_TRUE(Insert(*f, "http://q.example/?b=1&a=2"));
  EXPECT_FALSE(Insert(*f, "http://q.example/?a=2&b=1"));  // the stored sort_query applies
}

// Issue 10: a missing, stale or corrupt snapshot of an exact state was rebuilt silently. It is an
// error that names the files and leaves them alone; rebuild_bloom rebuilds on request.
TEST_F(SeenFilterTest, MissingStaleOrCorruptSnapshotIsAnErrorUnlessARebuildIsRequested) {
  const fs::path snap = dir_ / "bloom.snap";
  {
    auto f = MustOpen(Persistent(true));
    for (int i = 0; i < 50; ++i) Insert(*f, Url(i));
    ASSERT_TRUE(f->Save().ok());
  }
  const std::string old_snapshot = ReadFile(snap);
  {
    // A save usually appends to bloom.delta; after a rebuild it writes a whole new snapshot, so
    // old_snapshot is then stale.
    SeenFilterOptions rebuild = Persistent(true);
    rebuild.rebuild_bloom = true;
    auto f = MustOpen(rebuild);
    for (int i = 50; i < 100; ++i) Insert(*f, Url(i));
    ASSERT_TRUE(f->Save().ok());
  }
  const std::string good_snapshot = ReadFile(snap);
  ASSERT_NE(good_snapshot, old_snapshot);
  auto check = [&](std::string_view why, StatusCode code) {
    const std::string db_before = ReadFile(dir_ / "state.db");
    const bool had_snapshot = fs::exists(snap);
    const std::string snap_before = had_snapshot ? ReadFile(snap) : "";
    auto refused = SeenFilter::Open(Persistent(true));
    ASSERT_FALSE(refused.ok()) << why;
    EXPECT_EQ(refused.status().code(), code) << refused.status().ToString();
    const std::string& message = refused.status().message();
    EXPECT_NE(message.find(why), std::string::npos) << message;
    EXPECT_NE(message.find(snap.string()), std::string::npos) << message;
    EXPECT_NE(message.find("--rebuild"), std::string::npos) << message;
    EXPECT_EQ(ReadFile(dir_ / "state.db"), db_before);
    EXPECT_EQ(fs::exists(snap), had_snapshot);
    if (had_snapshot) {
      EXPECT_EQ(ReadFile(snap), snap_before);
    }

    SeenFilterOptions rebuild = Persistent(true);
    rebuild.rebuild_bloom = true;
    auto f = MustOpen(rebuild);
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(HasNotice(*f, "rebuilt the Bloom filter from 100 keys")) << why;
    for (int i = 0; i < 100; ++i) EXPECT_FALSE(Insert(*f, Url(i))) << why << " " << i;
    EXPECT_EQ(f->Stats().bloom_inserted, 100u);
    EXPECT_EQ(f->Stats().stored_keys, 100u);
    f.reset();  // not saved: the state on disk is as it was
    EXPECT_EQ(fs::exists(snap), had_snapshot);
  };
  fs::remove(snap);
  check("is missing", StatusCode::kFailedPrecondition);
  { std::ofstream(snap, std::ios::binary | std::ios::trunc) << old_snapshot; }
  check("is stale (generation 1", StatusCode::kCorruption);
  std::string damaged = good_snapshot;
  damaged[damaged.size() / 2] ^= 0x5a;
  { std::ofstream(snap, std::ios::binary | std::ios::trunc) << damaged; }
  check("checksum mismatch", StatusCode::kCorruption);

  // A rebuild that is saved makes the state whole again.
  SeenFilterOptions rebuild = Persistent(true);
  rebuild.rebuild_bloom = true;
  ASSERT_TRUE(MustOpen(rebuild)->Save().ok());
  auto f = MustOpen(Persistent(true));
  EXPECT_TRUE(f->notices().empty());
  EXPECT_FALSE(Insert(*f, Url(7)));
}

TEST_F(SeenFilterTest, BloomOnlyStateCannotBeRebuiltAndAStaleSnapshotIsAnError) {
  const fs::path snap = dir_ / "bloom.snap";
  {
    auto f = MustOpen(Persistent(false));
    Insert(*f, Url(1));
    ASSERT_TRUE(f->Save().ok());
  }
  {
    auto f = MustOpen(Persistent(false));
    Insert(*f, Url(2));
    ASSERT_TRUE(f->Save().ok());  // appends Url(2) to bloom.delta
  }
  const std::string old_snapshot = ReadFile(snap);
  // bloom.snap alone is now behind state.db: Url(2) is only in the log.
  fs::remove(dir_ / "bloom.delta");
  auto stale = SeenFilter::Open(Persistent(false));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), StatusCode::kCorruption);
  EXPECT_NE(stale.status().message().find("cannot be rebuilt"), std::string::npos);
  SeenFilterOptions rebuild = Persistent(false);
  rebuild.rebuild_bloom = true;
  auto refused = SeenFilter::Open(rebuild);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadFile(snap), old_snapshot);
}

TEST_F(SeenFilterTest, BloomOnlyStateWithACorruptSnapshotIsAnErrorAndUntouched) {
  {
    auto f = MustOpen(Persistent(false));
    Insert(*f, Url(1));
    ASSERT_TRUE(f->Save().ok());
  }
  const fs::path snap = dir_ / "bloom.snap";
  std::string bytes = ReadFile(snap);
  bytes[bytes.size() / 2] ^= 0x5a;
  { std::ofstream(snap, std::ios::binary | std::ios::trunc) << bytes; }
  auto f = SeenFilter::Open(Persistent(false));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorruption) << f.status().ToString();
  EXPECT_EQ(ReadFile(snap), bytes);
}

TEST_F(SeenFilterTest, ForeignStateDatabaseIsRejectedAndUntouched) {
  fs::create_directories(dir_);
  const fs::path db_path = dir_ / "state.db";
  {
    auto db = SqliteDb::Open(db_path.string(), SqliteDb::Options{.wal = false});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE other(x); INSERT INTO other VALUES(1)").ok());
  }
  const std::string before = ReadFile(db_path);
  auto f = SeenFilter::Open(Persistent(true));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorruption) << f.status().ToString();
  EXPECT_EQ(ReadFile(db_path), before);

  {
    std::ofstream(db_path, std::ios::binary | std::ios::trunc) << "not a database at all, clearly";
  }
  f = SeenFilter::Open(Persistent(true));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorruption) << f.status().ToString();
  EXPECT_EQ(ReadFile(db_path), "not a database at all, clearly");
}

// A crash (no Save) keeps exactly what the last Checkpoint committed, in the store, in the Bloom
// filter and in the caller's own tables.
TEST_F(SeenFilterTest, CheckpointedStateSurvivesACrashAtTheLastCheckpoint) {
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    fs::remove_all(dir_);
    {
      // The caller's tables share the checkpoint's transaction as the crawl's do (CrawlState).
      auto state = testing::SeenState::Open(Persistent(exact, /*checkpointed=*/true));
      ASSERT_TRUE(state.ok()) << state.status().ToString();
      SeenFilter& f = *(*state)->filter;
      for (int i = 0; i < 40; ++i) EXPECT_TRUE(Insert(f, Url(i)));
      ASSERT_TRUE((*state)
                      ->Checkpoint([](SqliteDb& db) {
                        return db.Exec(
                            "CREATE TABLE IF NOT EXISTS pending(url TEXT);"
                            "INSERT INTO pending VALUES('checkpointed')");
                      })
                      .ok());
      for (int i = 40; i < 80; ++i) EXPECT_TRUE(Insert(f, Url(i)));
      ASSERT_TRUE((*state)->db().Exec("INSERT INTO pending VALUES('lost')").ok());
      // Destroyed without Save: the crash.
    }
    auto state = testing::SeenState::Open(Persistent(exact, /*checkpointed=*/true));
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    const SeenFilter* f = (*state)->filter.get();
    EXPECT_TRUE((*state)->notices.empty()) << (*state)->notices[0].text;
    for (int i = 0; i < 40; ++i) EXPECT_TRUE(Has(*f, Url(i))) << i;
    for (int i = 40; i < 80; ++i) EXPECT_FALSE(Has(*f, Url(i))) << i;
    EXPECT_EQ(f->Stats().bloom_inserted, 40u);
    if (exact) {
      EXPECT_EQ(f->Stats().stored_keys, 40u);
    }
    auto rows = (*state)->db().Prepare("SELECT group_concat(url) FROM pending");
    ASSERT_TRUE(rows.ok());
    ASSERT_TRUE(*rows->Step());
    EXPECT_EQ(rows->ColumnText(0), "checkpointed");
  }
}

TEST_F(SeenFilterTest, StandaloneExactRowsSurviveACrashAndTheFilterIsRebuilt) {
  {
    auto f = MustOpen(Persistent(true));
    EXPECT_TRUE(Insert(*f, Url(1)));
    ASSERT_TRUE(f->Save().ok());
    EXPECT_TRUE(Insert(*f, Url(2)));  // committed with its batch; no Save
  }
  // The database recorded that its rows superseded bloom.snap: this rebuild is due, not a guess.
  auto f = MustOpen(Persistent(true));
  EXPECT_TRUE(HasNotice(*f, "rows were committed after")) << f->notices().size();
  EXPECT_FALSE(Insert(*f, Url(1)));
  EXPECT_FALSE(Insert(*f, Url(2)));
  EXPECT_TRUE(Insert(*f, Url(3)));
  f.reset();  // another crash: rebuilt again, from all three rows
  f = MustOpen(Persistent(true));
  EXPECT_TRUE(HasNotice(*f, "rebuilt the Bloom filter from 3 keys"));
  ASSERT_TRUE(f->Save().ok());
  f.reset();
  f = MustOpen(Persistent(true));
  EXPECT_TRUE(f->notices().empty());
  EXPECT_FALSE(Insert(*f, Url(3)));
}

TEST_F(SeenFilterTest, SnapshotOfACommittedCheckpointIsPromotedAfterACrash) {
  const fs::path snap = dir_ / "bloom.snap", next = dir_ / "bloom.snap.next";
  {
    auto f = MustOpen(Persistent(false, /*checkpointed=*/true));
    Insert(*f, Url(1));
    ASSERT_TRUE(f->Checkpoint().ok());  // the first checkpoint writes a whole snapshot
  }
  // As if the crash hit after that checkpoint's COMMIT, before its rename.
  fs::rename(snap, next);
  auto f = MustOpen(Persistent(false, /*checkpointed=*/true));
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(Has(*f, Url(1)));
  EXPECT_FALSE(fs::exists(next));
  EXPECT_TRUE(fs::exists(snap));
}

// Issue 10: two `urlsieve filter --state S` both ran, and one run's keys were lost.
TEST_F(SeenFilterTest, ASecondOpenOfAStateDirectoryIsRefusedNamingTheHolder) {
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    fs::remove_all(dir_);
    auto first = MustOpen(Persistent(exact));
    auto second = SeenFilter::Open(Persistent(exact));
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(second.status().message().find(dir_.string()), std::string::npos);
    EXPECT_NE(second.status().message().find("process " + std::to_string(::getpid())),
              std::string::npos)
        << second.status().message();
    SeenFilterOptions read_only = Persistent(exact);
    read_only.read_only = true;
    EXPECT_FALSE(SeenFilter::Open(read_only).ok());
    first.reset();
    EXPECT_NE(MustOpen(Persistent(exact)), nullptr);
  }
}

// Issue 10: a bloom.snap copied from another state directory was accepted (806 of 4,389 pages
// were then never fetched). It is refused, naming both files and both identities.
TEST_F(SeenFilterTest, SnapshotOfAnotherStateIsRefusedAndNothingIsChanged) {
  const fs::path other = dir_.string() + "_other";
  fs::remove_all(other);
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    fs::remove_all(dir_);
    fs::remove_all(other);
    SeenFilterOptions other_options = Persistent(exact);
    other_options.state_dir = other.string();
    StateIdentity mine, theirs;
    {
      auto f = MustOpen(Persistent(exact));
      Insert(*f, Url(1));
      ASSERT_TRUE(f->Save().ok());
      mine = f->Stats().identity;
      auto g = MustOpen(other_options);  // the same history: generation 1 too
      Insert(*g, Url(2));
      ASSERT_TRUE(g->Save().ok());
      theirs = g->Stats().identity;
    }
    ASSERT_NE(mine, theirs);
    for (const char* name : {"bloom.snap", "bloom.snap.next"}) {
      SCOPED_TRACE(name);
      const std::string saved = ReadFile(dir_ / "bloom.snap");
      const std::string foreign = ReadFile(other / "bloom.snap");
      fs::copy_file(other / "bloom.snap", dir_ / name, fs::copy_options::overwrite_existing);
      const std::string db_before = ReadFile(dir_ / "state.db");
      auto f = SeenFilter::Open(Persistent(exact));
      ASSERT_FALSE(f.ok());
      EXPECT_EQ(f.status().code(), StatusCode::kCorruption);
      const std::string& message = f.status().message();
      for (const std::string& needle :
           {(dir_ / name).string(), (dir_ / "state.db").string(), mine.ToHex(), theirs.ToHex()}) {
        EXPECT_NE(message.find(needle), std::string::npos) << needle << " in " << message;
      }
      EXPECT_EQ(ReadFile(dir_ / name), foreign);
      EXPECT_EQ(ReadFile(dir_ / "state.db"), db_before);
      fs::remove(dir_ / name);
      { std::ofstream(dir_ / "bloom.snap", std::ios::binary) << saved; }
    }
    auto f = MustOpen(Persistent(exact));
    EXPECT_TRUE(Has(*f, Url(1)));
    EXPECT_FALSE(Has(*f, Url(2)));
  }
  fs::remove_all(other);
}

// A .next of this state but of a generation no crash can leave is not deleted: an error.
TEST_F(SeenFilterTest, NextSnapshotOfAnUnexpectedGenerationIsAnErrorAndKept) {
  const fs::path snap = dir_ / "bloom.snap", next = dir_ / "bloom.snap.next";
  std::string first;
  {
    auto f = MustOpen(Persistent(false, /*checkpointed=*/true));
    Insert(*f, Url(1));
    ASSERT_TRUE(f->Checkpoint().ok());
    first = ReadFile(snap);  // generation 1
    Insert(*f, Url(2));
    ASSERT_TRUE(f->Checkpoint().ok());
    ASSERT_TRUE(f->Checkpoint().ok());  // generation 3
  }
  { std::ofstream(next, std::ios::binary) << first; }
  auto f = SeenFilter::Open(Persistent(false, /*checkpointed=*/true));
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("bloom.snap.next is at generation 1"), std::string::npos)
      << f.status().message();
  EXPECT_EQ(ReadFile(next), first);
}

// Issue 10: a 0-byte state.db was taken for a new state ("bloom.snap is stale", then overwritten).
TEST_F(SeenFilterTest, EmptyOrMissingStateDbBesideASnapshotIsAnErrorAndNothingIsChanged) {
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    fs::remove_all(dir_);
    {
      auto f = MustOpen(Persistent(exact));
      Insert(*f, Url(1));
      ASSERT_TRUE(f->Save().ok());
    }
    const std::string snapshot = ReadFile(dir_ / "bloom.snap");
    fs::resize_file(dir_ / "state.db", 0);
    auto f = SeenFilter::Open(Persistent(exact));
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), StatusCode::kCorruption);
    EXPECT_NE(f.status().message().find((dir_ / "state.db").string() + " is empty"),
              std::string::npos)
        << f.status().message();
    EXPECT_EQ(fs::file_size(dir_ / "state.db"), 0u);
    EXPECT_EQ(ReadFile(dir_ / "bloom.snap"), snapshot);
    fs::remove(dir_ / "state.db");
    f = SeenFilter::Open(Persistent(exact));
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.status().message().find("state.db is missing"), std::string::npos)
        << f.status().message();
    EXPECT_FALSE(fs::exists(dir_ / "state.db"));
    EXPECT_EQ(ReadFile(dir_ / "bloom.snap"), snapshot);
  }
}

// Issue 10: 1 byte cut off an exact state.db gave exit 0 and a seen URL reported new again.
TEST_F(SeenFilterTest, TruncatedStateDbIsCorruptionNamingTheFile) {
  {
    auto f = MustOpen(Persistent(true));
    for (int i = 0; i < 200; ++i) Insert(*f, Url(i));
    ASSERT_TRUE(f->Save().ok());
  }
  const fs::path db = dir_ / "state.db";
  fs::resize_file(db, fs::file_size(db) - 1);
  auto f = SeenFilter::Open(Persistent(true));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorruption);
  EXPECT_EQ(f.status().message().rfind(db.string() + ": truncated", 0), 0u) << f.status().message();
}

// A state written before identities (format version 1) is upgraded on its first writable open
// and loses nothing; the unstamped snapshot is accepted only for that one generation.
TEST_F(SeenFilterTest, Version1StateIsUpgradedAndLosesNothing) {
  const fs::path snap = dir_ / "bloom.snap";
  auto make_version1 = [&]() {
    fs::remove_all(dir_);
    std::vector<std::string> keys(30);
    {
      auto f = MustOpen(Persistent(true, /*checkpointed=*/true));
      for (int i = 0; i < 30; ++i) {
        Insert(*f, Url(i));
        ASSERT_TRUE(f->canonicalizer().CanonicalizeTo(Url(i), &keys[i]).ok());
      }
      ASSERT_TRUE(f->Checkpoint().ok());
    }
    // As version 1 wrote it: no identity in state.db, a snapshot without one, the exact store's
    // URLs in seen_urls (migrated by the upgrade).
    testing::MakeFormat1ExactStore(dir_, keys);
    auto db = SqliteDb::Open((dir_ / "state.db").string());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("DELETE FROM urlsieve_meta WHERE key = 'identity';"
                           "UPDATE urlsieve_meta SET value = '1' WHERE key = 'version'")
                    .ok());
    uint64_t generation = 0;
    auto bloom = ScalableBloomFilter::Load(snap.string(), &generation);
    ASSERT_TRUE(bloom.ok());
    ASSERT_TRUE((*bloom)->Save(snap.string(), generation).ok());  // zero identity
  };
  make_version1();
  StateIdentity assigned;
  {
    auto f = MustOpen(Persistent(true, /*checkpointed=*/true));
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(HasNotice(*f, "upgraded")) << (f->notices().empty() ? "" : f->notices()[0].text);
    assigned = f->Stats().identity;
    EXPECT_FALSE(assigned.IsZero());
    for (int i = 0; i < 30; ++i) EXPECT_TRUE(Has(*f, Url(i))) << i;
    StateIdentity stamped;
    ASSERT_TRUE(ScalableBloomFilter::Load(snap.string(), nullptr, &stamped).ok());
    EXPECT_EQ(stamped, assigned);
  }
  auto reopened = MustOpen(Persistent(true, /*checkpointed=*/true));
  EXPECT_EQ(reopened->Stats().identity, assigned);
  EXPECT_TRUE(reopened->notices().empty());
  reopened.reset();

  // A crash between committing the identity and stamping the snapshot: accepted once more, then
  // stamped.
  make_version1();
  const std::string unstamped = ReadFile(snap);
  { MustOpen(Persistent(true, /*checkpointed=*/true)); }
  { std::ofstream(snap, std::ios::binary | std::ios::trunc) << unstamped; }
  {
    auto f = MustOpen(Persistent(true, /*checkpointed=*/true));
    ASSERT_NE(f, nullptr);
    for (int i = 0; i < 30; ++i) EXPECT_TRUE(Has(*f, Url(i))) << i;
    Insert(*f, Url(30));
    ASSERT_TRUE(f->Checkpoint().ok());
  }
  // Past that generation an unstamped snapshot is another state's.
  { std::ofstream(snap, std::ios::binary | std::ios::trunc) << unstamped; }
  auto refused = SeenFilter::Open(Persistent(true, /*checkpointed=*/true));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("version-1"), std::string::npos)
      << refused.status().message();
}

// Issue 10: `urlsieve stats` failed on a read-only directory. A read-only open writes nothing.
TEST_F(SeenFilterTest, ReadOnlyOpenWritesNothing) {
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    fs::remove_all(dir_);
    {
      auto f = MustOpen(Persistent(exact));
      for (int i = 0; i < 20; ++i) Insert(*f, Url(i));
      ASSERT_TRUE(f->Save().ok());
    }
    std::map<std::string, std::string> before;
    for (const auto& e : fs::directory_iterator(dir_)) before[e.path().filename()] = ReadFile(e);
    SeenFilterOptions o = Persistent(exact);
    o.read_only = true;
    {
      auto f = MustOpen(o);
      ASSERT_NE(f, nullptr);
      EXPECT_EQ(f->Stats().bloom_inserted, 20u);
      EXPECT_TRUE(Has(*f, Url(3)));
      EXPECT_EQ(f->InsertIfNew(Url(99)).status().code(), StatusCode::kFailedPrecondition);
      EXPECT_EQ(f->Save().code(), StatusCode::kFailedPrecondition);
      auto reader = SeenFilter::Open(o);  // readers share
      EXPECT_TRUE(reader.ok()) << reader.status().ToString();
      EXPECT_FALSE(SeenFilter::Open(Persistent(exact)).ok());  // a writer waits for them
    }
    std::map<std::string, std::string> after;
    for (const auto& e : fs::directory_iterator(dir_)) after[e.path().filename()] = ReadFile(e);
    EXPECT_EQ(after, before);
  }
  SeenFilterOptions nowhere = Persistent(false);
  nowhere.state_dir = (dir_ / "nowhere").string();
  nowhere.read_only = true;
  EXPECT_EQ(SeenFilter::Open(nowhere).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(dir_ / "nowhere"));
}

TEST_F(SeenFilterTest, RejectsBadOptions) {
  SeenFilterOptions o;
  o.exact = true;
  EXPECT_EQ(SeenFilter::Open(o).status().code(), StatusCode::kInvalidArgument);
  o = SeenFilterOptions{};
  o.fp_rate = 1.5;
  EXPECT_EQ(SeenFilter::Open(o).status().code(), StatusCode::kInvalidArgument);
  o = SeenFilterOptions{};
  o.capacity = 0;
  EXPECT_EQ(SeenFilter::Open(o).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace urlsieve

namespace urlsieve {
namespace {

// A filter inherited through fork(): every call in the child is a clear error, and the child's
// exit neither saves nor closes the parent's state (issue 24: on a local state "the last process
// to close wins", and the other's inserts vanished).
TEST_F(SeenFilterTest, AFilterInheritedThroughForkIsAnErrorInTheChildAndLeavesTheStateAlone) {
  for (const bool exact : {false, true}) {
    SCOPED_TRACE(exact ? "exact" : "bloom");
    fs::remove_all(dir_);
    auto f = MustOpen(Persistent(exact));
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(Insert(*f, Url(1)));
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // the child: report through the exit code, never return into gtest
      int code = 0;
      auto inserted = f->InsertIfNew(Url(2));
      if (inserted.ok() || inserted.status().code() != StatusCode::kFailedPrecondition ||
          inserted.status().message().find("fork()") == std::string::npos) {
        code |= 1;
      }
      if (f->Contains(Url(1)).ok() || f->Save().ok()) code |= 2;
      std::vector<uint8_t> is_new;
      if (f->InsertKeysIfNew(std::vector<std::string_view>{"k"}, &is_new).ok()) code |= 4;
      f.reset();  // the destructor in the child: nothing saved, nothing closed
      ::_exit(code);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    // The parent goes on, and its state is its own.
    EXPECT_TRUE(Insert(*f, Url(3)));
    ASSERT_TRUE(f->Save().ok());
    f.reset();
    auto reopened = MustOpen(Persistent(exact));
    ASSERT_NE(reopened, nullptr);
    EXPECT_TRUE(Has(*reopened, Url(1)));
    EXPECT_TRUE(Has(*reopened, Url(3)));
    EXPECT_FALSE(Has(*reopened, Url(2)));
  }
}

}  // namespace
}  // namespace urlsieve
