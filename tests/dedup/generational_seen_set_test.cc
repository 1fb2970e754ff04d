// The generational seen set (dedup/generational_seen_set.h) under a ManualClock: keys come back as
// new exactly after revisit_after (within one generation), not before; the false-positive rate
// over the live generations stays under the bound; generations survive a reopen and age across
// one; stored parameters; bad generation files. (The SeenSet contract runs it too:
// seen_set_test.cc.)
#include "dedup/generational_seen_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "dedup/seen_filter.h"
#include "dedup/state_dir.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint32_t kGenerations = 4;
constexpr seconds kRevisitAfter = hours(4);  // generations of one hour

int64_t WallMs(const ManualClock& clock) {
  return std::chrono::duration_cast<milliseconds>(clock.WallNow().time_since_epoch()).count();
}

// Moves the clock to wall time `ms` (never backwards).
void MoveTo(ManualClock& clock, int64_t ms) {
  const int64_t now = WallMs(clock);
  ASSERT_GE(ms, now);
  clock.Advance(milliseconds(ms - now));
}

std::string Url(int i) {
  return "http://h" + std::to_string(i % 7) + ".example/p/" + std::to_string(i);
}

std::unique_ptr<GenerationalSeenSet> InMemory(ManualClock& clock, uint64_t capacity = 10000,
                                              double fp_rate = 1e-3) {
  auto set =
      GenerationalSeenSet::InMemory({capacity, fp_rate, kRevisitAfter, kGenerations, &clock});
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return set.ok() ? std::move(*set) : nullptr;
}

bool InsertNew(SeenSet& set, const std::string& key) {
  auto r = set.InsertHashedKeyIfNew(key, SeenSet::Hash(key));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() && *r;
}

bool Contains(const SeenSet& set, const std::string& key) {
  auto r = set.Contains(key);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() && *r;
}

TEST(GenerationalSeenSetTest, AKeyComesBackNewExactlyWhenItsGenerationAgesOut) {
  const int64_t length =
      std::chrono::duration_cast<milliseconds>(kRevisitAfter).count() / kGenerations;
  const int64_t revisit = std::chrono::duration_cast<milliseconds>(kRevisitAfter).count();
  // Keys told new at the start, just after it, in the middle and at the very end of a generation.
  for (int64_t offset : {int64_t{0}, int64_t{1}, length / 3, length - 1}) {
    SCOPED_TRACE(offset);
    ManualClock clock;
    auto set = InMemory(clock);
    ASSERT_NE(set, nullptr);
    EXPECT_EQ(set->generation_length(), milliseconds(length));
    const int64_t start = (WallMs(clock) / length + 1) * length;
    MoveTo(clock, start + offset);
    const int64_t told_new_at = WallMs(clock);
    const std::string key = "http://example.com/revisit";
    ASSERT_TRUE(InsertNew(*set, key));
    // Its generation is the current one and the G after it: it ages out when generation
    // index + G + 1 begins, more than revisit_after and at most one generation more later.
    const int64_t back_at = (told_new_at / length + kGenerations + 1) * length;
    EXPECT_GT(back_at - told_new_at, revisit);
    EXPECT_LE(back_at - told_new_at, revisit + length);
    // Seen all along before that, and a sighting does not refresh it.
    for (int64_t t = told_new_at + 1; t < back_at; t += 7 * 60 * 1000 + 13) {
      MoveTo(clock, t);
      ASSERT_TRUE(Contains(*set, key)) << t - told_new_at;
      ASSERT_FALSE(InsertNew(*set, key)) << t - told_new_at;
    }
    MoveTo(clock, back_at - 1);
    EXPECT_TRUE(Contains(*set, key));
    EXPECT_FALSE(InsertNew(*set, key));
    MoveTo(clock, back_at);
    EXPECT_FALSE(Contains(*set, key));
    EXPECT_TRUE(InsertNew(*set, key));
    // New again: seen for another revisit_after.
    MoveTo(clock, back_at + revisit - 1);
    EXPECT_FALSE(InsertNew(*set, key));
    MoveTo(clock, back_at + revisit + length);
    EXPECT_TRUE(InsertNew(*set, key));
  }
}

TEST(GenerationalSeenSetTest, BatchesAgeLikeSingleInserts) {
  ManualClock clock;
  auto set = InMemory(clock);
  ASSERT_NE(set, nullptr);
  const int64_t length = set->generation_length().count();
  std::vector<std::string> keys;
  for (int i = 0; i < 200; ++i) keys.push_back(Url(i));
  std::vector<std::string_view> first(keys.begin(), keys.begin() + 100);
  std::vector<std::string_view> all(keys.begin(), keys.end());
  std::vector<uint8_t> is_new;
  ASSERT_TRUE(set->InsertKeysIfNew(first, &is_new).ok());
  EXPECT_EQ(std::count(is_new.begin(), is_new.end(), 1), 100);
  const int64_t first_generation = set->ClockGeneration();
  MoveTo(clock, (first_generation + 2) * length);
  // The first 100 are seen (in an older generation), the other 100 new (into the current one).
  ASSERT_TRUE(set->InsertKeysIfNew(all, &is_new).ok());
  EXPECT_EQ(std::count(is_new.begin(), is_new.begin() + 100, 1), 0);
  EXPECT_EQ(std::count(is_new.begin() + 100, is_new.end(), 1), 100);
  // The first generation ages out; the later one stays.
  MoveTo(clock, (first_generation + kGenerations + 1) * length);
  ASSERT_TRUE(set->InsertKeysIfNew(all, &is_new).ok());
  EXPECT_EQ(std::count(is_new.begin(), is_new.begin() + 100, 1), 100);
  EXPECT_EQ(std::count(is_new.begin() + 100, is_new.end(), 1), 0);
  // A repeat within a batch is new once.
  MoveTo(clock, (first_generation + 2 * kGenerations + 4) * length);
  std::vector<std::string_view> repeats = {all[0], all[1], all[0], all[150], all[1]};
  ASSERT_TRUE(set->InsertKeysIfNew(repeats, &is_new).ok());
  EXPECT_EQ(is_new, (std::vector<uint8_t>{1, 1, 0, 1, 0}));
}

// Steady state: capacity keys per revisit_after, so every live generation holds capacity / G.
// The share of never-inserted keys answered "seen" stays under fp_rate (the union bound).
TEST(GenerationalSeenSetTest, FalsePositiveRateStaysUnderTheBoundAtSteadyState) {
  constexpr uint64_t kCapacity = 40000;
  constexpr double kFpRate = 0.01;
  ManualClock clock;
  auto set = InMemory(clock, kCapacity, kFpRate);
  ASSERT_NE(set, nullptr);
  const int64_t length = set->generation_length().count();
  int key = 0;
  int told_seen = 0;  // false positives of test-and-insert while filling
  for (uint32_t g = 0; g <= 2 * kGenerations; ++g) {
    MoveTo(clock, (set->ClockGeneration() + 1) * length);
    for (uint64_t i = 0; i < kCapacity / kGenerations; ++i) {
      if (!InsertNew(*set, Url(key++))) ++told_seen;
    }
  }
  const SeenStats stats = set->Stats();
  EXPECT_EQ(stats.live_generations, kGenerations + 1);
  EXPECT_EQ(stats.revisit_after_s, static_cast<uint64_t>(kRevisitAfter.count()));
  EXPECT_EQ(stats.generations, kGenerations);
  EXPECT_LE(stats.bloom_expected_fp_rate, kFpRate);
  constexpr int kProbes = 400000;
  int positives = 0;
  for (int i = 0; i < kProbes; ++i) {
    if (Contains(*set, "http://never.example/" + std::to_string(i))) ++positives;
  }
  const double measured = static_cast<double>(positives) / kProbes;
  const double bits_per_key =
      8.0 * static_cast<double>(stats.bloom_bytes) / static_cast<double>(kCapacity);
  std::printf("generational FPR %.5f (bound %.3f, expected %.5f), %.1f bits per key\n", measured,
              kFpRate, stats.bloom_expected_fp_rate, bits_per_key);
  EXPECT_LE(measured, kFpRate);
  EXPECT_GT(positives, 0);  // the probes can fail: at this ε some answer "maybe"
  EXPECT_LE(static_cast<double>(told_seen) / key, kFpRate);
}

// Invariant 5 across turns of the generation: threads race on the same keys while the clock
// crosses generations (never a whole revisit_after), and each key is new for exactly one.
TEST(GenerationalSeenSetTest, ExactlyOneThreadIsToldNewWhileGenerationsTurn) {
  ManualClock clock;
  // Generations of 50000 keys at 2e-7: 6000 keys meet no false positive.
  auto set = InMemory(clock, 200000, 1e-6);
  ASSERT_NE(set, nullptr);
  constexpr int kKeys = 6000;
  constexpr int kThreads = 4;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) keys.push_back(Url(i));
  std::vector<std::atomic<int>> told_new(kKeys);
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const size_t batch = t == 0 ? 1 : 16 * t;
      std::vector<std::string_view> views;
      std::vector<uint8_t> is_new;
      for (int begin = 0; begin < kKeys; begin += static_cast<int>(batch)) {
        views.clear();
        for (int i = begin; i < std::min<int>(kKeys, begin + static_cast<int>(batch)); ++i) {
          views.push_back(keys[(t % 2 == 0) ? i : kKeys - 1 - i]);
        }
        if (!set->InsertKeysIfNew(views, &is_new).ok()) break;
        for (size_t j = 0; j < views.size(); ++j) {
          const int id =
              (t % 2 == 0) ? begin + static_cast<int>(j) : kKeys - 1 - begin - static_cast<int>(j);
          if (is_new[j]) ++told_new[id];
        }
      }
      ++done;
    });
  }
  // Three turns, while the inserters run (or after they finished: then the test is a plain one).
  const int64_t length = set->generation_length().count();
  for (int turn = 0; turn < 3; ++turn) {
    MoveTo(clock, (set->ClockGeneration() + 1) * length);
    std::this_thread::yield();
  }
  for (std::thread& thread : threads) thread.join();
  int never = 0;  // a false positive: seen by everyone
  int twice = 0;  // a broken invariant 5
  for (int i = 0; i < kKeys; ++i) {
    never += told_new[i] == 0 ? 1 : 0;
    twice += told_new[i] > 1 ? 1 : 0;
  }
  EXPECT_EQ(twice, 0);
  EXPECT_EQ(never, 0);
}

class GenerationalStateTest : public ::testing::Test {
 protected:
  SeenFilterOptions Options(seconds revisit_after = kRevisitAfter) {
    SeenFilterOptions o;
    o.capacity = 10000;
    o.fp_rate = 1e-3;
    o.state_dir = (scratch_.path() / "state").string();
    o.revisit_after = revisit_after;
    o.generations = kGenerations;
    o.clock = &clock_;
    return o;
  }
  std::unique_ptr<SeenFilter> MustOpen(const SeenFilterOptions& o) {
    auto f = SeenFilter::Open(o);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(*f) : nullptr;
  }
  int Insert(SeenFilter& f, int from, int to) {
    int fresh = 0;
    for (int i = from; i < to; ++i) {
      auto r = f.InsertIfNew(Url(i));
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      fresh += r.ok() && *r ? 1 : 0;
    }
    return fresh;
  }
  int Contained(const SeenFilter& f, int from, int to) {
    int n = 0;
    for (int i = from; i < to; ++i) {
      auto r = f.Contains(Url(i));
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      n += r.ok() && *r ? 1 : 0;
    }
    return n;
  }
  std::set<std::string> GenerationFiles() const {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(scratch_.path() / "state")) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("bloom-gen-")) names.insert(name);
    }
    return names;
  }
  int64_t Length() const {
    return std::chrono::duration_cast<milliseconds>(kRevisitAfter).count() / kGenerations;
  }
  int64_t Generation() const { return WallMs(clock_) / Length(); }
  void NextGeneration() { MoveTo(clock_, (Generation() + 1) * Length()); }

  // A saved state with keys [0, 30) in one generation and [30, 60) in the next.
  void MakeState() {
    auto f = MustOpen(Options());
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(Insert(*f, 0, 30), 30);
    NextGeneration();
    ASSERT_EQ(Insert(*f, 30, 60), 30);
    ASSERT_TRUE(f->Save().ok());
  }

  ManualClock clock_;
  testing::ScratchDir scratch_{"urlsieve_generational"};
};

TEST_F(GenerationalStateTest, GenerationsSurviveSaveAndReopen) {
  MakeState();
  EXPECT_EQ(GenerationFiles().size(), 2u);
  {
    auto f = MustOpen(Options());
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(f->notices().empty()) << f->notices()[0].text;
    EXPECT_EQ(f->options().revisit_after, kRevisitAfter);
    EXPECT_EQ(f->options().generations, kGenerations);
    EXPECT_EQ(Contained(*f, 0, 60), 60);
    EXPECT_EQ(Insert(*f, 0, 60), 0);
    const SeenStats stats = f->Stats();
    EXPECT_EQ(stats.bloom_inserted, 60u);
    EXPECT_EQ(stats.live_generations, 2u);
    // Nothing new: a save writes no generation file again.
    const auto before = GenerationFiles();
    ASSERT_TRUE(f->Save().ok());
    EXPECT_EQ(GenerationFiles(), before);
    // A key in the current generation: only its file is rewritten (under the new checkpoint).
    ASSERT_EQ(Insert(*f, 60, 61), 1);
    ASSERT_TRUE(f->Save().ok());
    const auto after = GenerationFiles();
    EXPECT_EQ(after.size(), 2u);
    EXPECT_EQ(*after.begin(), *before.begin());
    EXPECT_NE(*after.rbegin(), *before.rbegin());
  }
  auto f = MustOpen(Options());
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Contained(*f, 0, 61), 61);
}

TEST_F(GenerationalStateTest, GenerationsAgeAcrossAReopen) {
  MakeState();
  const int64_t second = Generation();
  // Closed while time passes: the first generation ages out, the second not yet.
  MoveTo(clock_, (second + kGenerations) * Length());
  {
    auto f = MustOpen(Options());
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(Contained(*f, 0, 30), 0);
    EXPECT_EQ(Contained(*f, 30, 60), 30);
    EXPECT_EQ(f->Stats().live_generations, 2u);  // the second and the (empty) current one
    EXPECT_EQ(Insert(*f, 0, 30), 30);
    ASSERT_TRUE(f->Save().ok());
    // The aged-out generation's file is deleted once the save committed.
    EXPECT_EQ(GenerationFiles().size(), 2u);
  }
  MoveTo(clock_, (second + kGenerations + 1) * Length());
  auto f = MustOpen(Options());
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Contained(*f, 0, 30), 30);
  EXPECT_EQ(Contained(*f, 30, 60), 0);
  EXPECT_EQ(Insert(*f, 30, 60), 30);
}

// What a session did not save is lost; a file the committed list does not name (left by a
// checkpoint that never committed) is deleted on open. (The crash between PrepareCheckpoint and
// the COMMIT itself: seen_set_test.cc's contract.)
TEST_F(GenerationalStateTest, AnUnsavedSessionIsLostAndStrayFilesAreDeleted) {
  MakeState();
  const auto files = GenerationFiles();
  {
    auto f = MustOpen(Options());
    ASSERT_NE(f, nullptr);
    NextGeneration();
    ASSERT_EQ(Insert(*f, 100, 110), 10);
  }
  const auto state = scratch_.path() / "state";
  std::filesystem::copy_file(state / *files.begin(),
                             state / GenerationalSeenSet::FileName(Generation(), 99));
  auto f = MustOpen(Options());
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Contained(*f, 100, 110), 0);
  EXPECT_EQ(Contained(*f, 0, 60), 60);
  EXPECT_EQ(GenerationFiles(), files);
}

TEST_F(GenerationalStateTest, StoredParametersWinWithANotice) {
  MakeState();
  {
    auto f = MustOpen(Options(hours(24)));
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(f->notices().size(), 1u);
    EXPECT_EQ(f->notices()[0].kind, SeenNotice::Kind::kStoredParameters);
    EXPECT_NE(f->notices()[0].text.find("revisit-after 4h in 4 generations"), std::string::npos)
        << f->notices()[0].text;
    EXPECT_EQ(f->options().revisit_after, kRevisitAfter);
  }
  {
    auto f = MustOpen(Options(seconds(0)));  // opened without revisit_after: it keeps its own
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(f->notices().size(), 1u);
    EXPECT_NE(f->notices()[0].text.find("forgets with time"), std::string::npos);
    EXPECT_EQ(f->options().revisit_after, kRevisitAfter);
    EXPECT_EQ(f->Stats().revisit_after_s, static_cast<uint64_t>(kRevisitAfter.count()));
  }
  // A state made without revisit_after stays without it.
  SeenFilterOptions plain = Options(seconds(0));
  plain.state_dir = (scratch_.path() / "plain").string();
  {
    auto f = MustOpen(plain);
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(Insert(*f, 0, 5), 5);
    ASSERT_TRUE(f->Save().ok());
  }
  SeenFilterOptions revisit = plain;
  revisit.revisit_after = kRevisitAfter;
  auto f = MustOpen(revisit);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->notices().size(), 1u);
  EXPECT_NE(f->notices()[0].text.find("created without revisit-after"), std::string::npos)
      << f->notices()[0].text;
  EXPECT_EQ(f->options().revisit_after, seconds(0));
  EXPECT_EQ(f->Stats().revisit_after_s, 0u);
  clock_.Advance(hours(24 * 365));
  EXPECT_EQ(Insert(*f, 0, 5), 0);
}

TEST_F(GenerationalStateTest, BadOptionsAreRefused) {
  SeenFilterOptions o = Options();
  o.generations = 0;
  EXPECT_EQ(SeenFilter::Open(o).status().code(), StatusCode::kInvalidArgument);
  o.generations = GenerationalSeenSet::kMaxGenerations + 1;
  EXPECT_EQ(SeenFilter::Open(o).status().code(), StatusCode::kInvalidArgument);
  o = Options();
  o.revisit_after = seconds(-1);
  EXPECT_EQ(SeenFilter::Open(o).status().code(), StatusCode::kInvalidArgument);
  o = Options();
  o.rebuild_bloom = true;
  MakeState();
  EXPECT_EQ(SeenFilter::Open(o).status().code(), StatusCode::kFailedPrecondition);
}

// [trust]: a damaged, truncated, missing, foreign or misplaced generation file is a Corruption
// error naming it, and the open changes no file.
class GenerationalBadFileTest : public GenerationalStateTest {
 protected:
  std::string FirstFile() const {
    return (scratch_.path() / "state" / *GenerationFiles().begin()).string();
  }
  void ExpectCorruptionNaming(const std::string& file) {
    const auto files = GenerationFiles();
    auto f = SeenFilter::Open(Options());
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), StatusCode::kCorruption) << f.status().ToString();
    EXPECT_NE(f.status().message().find(file), std::string::npos) << f.status().ToString();
    EXPECT_EQ(GenerationFiles(), files);
  }
};

TEST_F(GenerationalBadFileTest, TruncatedFile) {
  MakeState();
  const std::string file = FirstFile();
  std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
  ExpectCorruptionNaming(file);
}

TEST_F(GenerationalBadFileTest, DamagedFile) {
  MakeState();
  const std::string file = FirstFile();
  {
    std::fstream out(file, std::ios::in | std::ios::out | std::ios::binary);
    out.seekp(static_cast<std::streamoff>(std::filesystem::file_size(file) - 100));
    out.put('\x5a');
  }
  ExpectCorruptionNaming(file);
}

TEST_F(GenerationalBadFileTest, MissingFile) {
  MakeState();
  const std::string file = FirstFile();
  std::filesystem::rename(file, file + ".away");
  ExpectCorruptionNaming(file);
}

TEST_F(GenerationalBadFileTest, FileOfAnotherState) {
  MakeState();
  const std::string file = FirstFile();
  // The same generation of another state, saved at the same checkpoint.
  SeenFilterOptions other = Options();
  other.state_dir = (scratch_.path() / "other").string();
  {
    auto f = MustOpen(other);
    ASSERT_NE(f, nullptr);
    ASSERT_TRUE(f->InsertIfNew("http://other.example/").ok());
    ASSERT_TRUE(f->Save().ok());
  }
  for (const auto& entry : std::filesystem::directory_iterator(other.state_dir)) {
    if (entry.path().filename().string().starts_with("bloom-gen-")) {
      std::filesystem::copy_file(entry.path(), file,
                                 std::filesystem::copy_options::overwrite_existing);
    }
  }
  ExpectCorruptionNaming(file);
}

TEST_F(GenerationalBadFileTest, FileOfAnotherCheckpoint) {
  MakeState();
  const auto files = GenerationFiles();
  // The first generation's file renamed as if the second had written it at the same checkpoint:
  // its stamp still says its own checkpoint.
  {
    auto f = MustOpen(Options());
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(Insert(*f, 200, 201), 1);
    ASSERT_TRUE(f->Save().ok());  // checkpoint 2 rewrites the second generation only
  }
  const auto now = GenerationFiles();
  std::string rewritten;
  for (const auto& name : now) {
    if (!files.contains(name)) rewritten = name;
  }
  ASSERT_FALSE(rewritten.empty());
  const std::string kept = *files.begin();
  const std::string path = (scratch_.path() / "state" / rewritten).string();
  // Replace the checkpoint-2 file by a copy of the checkpoint-1 file of the first generation.
  std::filesystem::copy_file(scratch_.path() / "state" / kept, path,
                             std::filesystem::copy_options::overwrite_existing);
  ExpectCorruptionNaming(path);
}

}  // namespace
}  // namespace urlsieve
