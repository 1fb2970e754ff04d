#include "dedup/seen_filter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "dedup/sqlite_db.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class SeenFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("urlsieve_seen_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

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

  fs::path dir_;
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

TEST_F(SeenFilterTest, RebuildsFromTheStoreWhenTheSnapshotIsMissingStaleOrCorrupt) {
  const fs::path snap = dir_ / "bloom.snap";
  {
    auto f = MustOpen(Persistent(true));
    for (int i = 0; i < 50; ++i) Insert(*f, Url(i));
    ASSERT_TRUE(f->Save().ok());
  }
  const std::string old_snapshot = ReadFile(snap);
  {
    auto f = MustOpen(Persistent(true));
    for (int i = 50; i < 100; ++i) Insert(*f, Url(i));
    ASSERT_TRUE(f->Save().ok());
  }
  auto check = [&](std::string_view why) {
    auto f = MustOpen(Persistent(true));
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(HasNotice(*f, "rebuilt the Bloom filter from 100 keys")) << why;
    EXPECT_TRUE(HasNotice(*f, why)) << f->notices()[0].text;
    for (int i = 0; i < 100; ++i) EXPECT_FALSE(Insert(*f, Url(i))) << why << " " << i;
    EXPECT_EQ(f->Stats().bloom_inserted, 100u);
    EXPECT_EQ(f->Stats().stored_keys, 100u);
  };
  fs::remove(snap);
  check("missing");
  { std::ofstream(snap, std::ios::binary | std::ios::trunc) << old_snapshot; }
  check("stale");
  std::string damaged = old_snapshot;
  damaged[damaged.size() / 2] ^= 0x5a;
  { std::ofstream(snap, std::ios::binary | std::ios::trunc) << damaged; }
  check("corruption");
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
      auto f = MustOpen(Persistent(exact, /*checkpointed=*/true));
      for (int i = 0; i < 40; ++i) EXPECT_TRUE(Insert(*f, Url(i)));
      ASSERT_TRUE(f->Checkpoint([](SqliteDb& db) {
                     return db.Exec(
                         "CREATE TABLE IF NOT EXISTS pending(url TEXT);"
                         "INSERT INTO pending VALUES('checkpointed')");
                   }).ok());
      for (int i = 40; i < 80; ++i) EXPECT_TRUE(Insert(*f, Url(i)));
      ASSERT_TRUE(f->state_db()->Exec("INSERT INTO pending VALUES('lost')").ok());
      // Destroyed without Save: the crash.
    }
    auto f = MustOpen(Persistent(exact, /*checkpointed=*/true));
    EXPECT_TRUE(f->notices().empty()) << f->notices()[0].text;
    for (int i = 0; i < 40; ++i) EXPECT_TRUE(Has(*f, Url(i))) << i;
    for (int i = 40; i < 80; ++i) EXPECT_FALSE(Has(*f, Url(i))) << i;
    EXPECT_EQ(f->Stats().bloom_inserted, 40u);
    if (exact) {
      EXPECT_EQ(f->Stats().stored_keys, 40u);
    }
    auto rows = f->state_db()->Prepare("SELECT group_concat(url) FROM pending");
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
  auto f = MustOpen(Persistent(true));
  EXPECT_TRUE(HasNotice(*f, "stale"));
  EXPECT_FALSE(Insert(*f, Url(1)));
  EXPECT_FALSE(Insert(*f, Url(2)));
}

TEST_F(SeenFilterTest, SnapshotOfACommittedCheckpointIsPromotedAfterACrash) {
  const fs::path snap = dir_ / "bloom.snap", next = dir_ / "bloom.snap.next";
  std::string first;
  {
    auto f = MustOpen(Persistent(false, /*checkpointed=*/true));
    Insert(*f, Url(1));
    ASSERT_TRUE(f->Checkpoint().ok());
    first = ReadFile(snap);
    Insert(*f, Url(2));
    ASSERT_TRUE(f->Checkpoint().ok());
  }
  // As if the crash hit after the second COMMIT, before its rename.
  fs::rename(snap, next);
  { std::ofstream(snap, std::ios::binary | std::ios::trunc) << first; }
  auto f = MustOpen(Persistent(false, /*checkpointed=*/true));
  EXPECT_TRUE(Has(*f, Url(2)));
  EXPECT_FALSE(fs::exists(next));
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
