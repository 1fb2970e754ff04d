#include "dedup/bloom/bloom_delta_log.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "dedup/bloom/scalable_bloom_filter.h"
#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::WriteFile;

KeyHash Key(uint64_t i) {
  const std::string s = "key-" + std::to_string(i);
  return HashKey(s);
}

StateIdentity Identity(uint8_t seed) {
  StateIdentity id;
  for (size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<uint8_t>(seed + i);
  return id;
}

// A snapshot, a log attached to it, and the keys of each committed generation: the owner's side
// of the protocol (SeenFilter's) without SQLite, the committed meta value kept in `meta_`.
class BloomDeltaLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto bloom = ScalableBloomFilter::Create({/*capacity=*/100'000, /*fp_rate=*/1e-4});
    ASSERT_TRUE(bloom.ok());
    bloom_ = std::move(*bloom);
    ASSERT_TRUE(bloom_->Save(snap_.string(), /*generation=*/1).ok());
    log_ = BloomDeltaLog::Detached(path_.string(), identity_, *bloom_);
    ASSERT_TRUE(log_->NeedsSnapshot(1));
    log_->SnapshotCommitted(1, *bloom_);
    meta_ = BloomDeltaLog::MetaAfterSnapshot(1);
  }

  // Inserts keys [from, to) and records the new ones.
  void InsertKeys(uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to; ++i) {
      const KeyHash key = Key(i);
      if (bloom_->InsertIfNew(key)) log_->Record(key);
    }
  }
  // One checkpoint of the next generation; `commit` false: crashed before the COMMIT.
  void Checkpoint(bool commit = true) {
    const uint64_t generation = log_->generation() + 1;
    ASSERT_FALSE(log_->NeedsSnapshot(generation));
    const std::string meta = log_->MetaAfterAppend();
    ASSERT_TRUE(log_->Append(generation).ok());
    if (!commit) return;
    meta_ = meta;
    log_->AppendCommitted();
  }
  Result<std::unique_ptr<BloomDeltaLog>> Reopen(std::unique_ptr<ScalableBloomFilter>* bloom,
                                                const StateIdentity& identity) {
    uint64_t generation = 0;
    auto loaded = ScalableBloomFilter::Load(snap_.string(), &generation);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    *bloom = std::move(*loaded);
    return BloomDeltaLog::OpenAndReplay(path_.string(), identity, meta_, snap_.string(), generation,
                                        bloom->get());
  }
  Result<std::unique_ptr<BloomDeltaLog>> Reopen(std::unique_ptr<ScalableBloomFilter>* bloom) {
    return Reopen(bloom, identity_);
  }
  static int CountPresent(const ScalableBloomFilter& bloom, uint64_t from, uint64_t to) {
    int present = 0;
    for (uint64_t i = from; i < to; ++i) present += bloom.MayContain(Key(i)) ? 1 : 0;
    return present;
  }

  testing::ScratchDir dir_{"urlsieve_delta"};
  fs::path snap_ = dir_.path() / "bloom.snap";
  fs::path path_ = dir_.path() / "bloom.delta";
  StateIdentity identity_ = Identity(7);
  std::unique_ptr<ScalableBloomFilter> bloom_;
  std::unique_ptr<BloomDeltaLog> log_;
  std::string meta_;  // what state.db would have committed
};

TEST_F(BloomDeltaLogTest, ReplaysEveryCommittedRecordInOrder) {
  InsertKeys(0, 100);
  Checkpoint();  // generation 2
  Checkpoint();  // 3: an empty record
  InsertKeys(100, 250);
  Checkpoint();  // 4
  EXPECT_EQ(log_->generation(), 4u);
  EXPECT_EQ(fs::file_size(path_), BloomDeltaLog::kHeaderBytes + 3 * 40 + 250 * 16);
  EXPECT_EQ(meta_, "1 " + std::to_string(fs::file_size(path_)));

  std::unique_ptr<ScalableBloomFilter> reopened;
  auto log = Reopen(&reopened);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->generation(), 4u);
  EXPECT_EQ(CountPresent(*reopened, 0, 250), 250);
  EXPECT_EQ(reopened->Stats().inserted, bloom_->Stats().inserted);
  // Appending continues after the replayed records.
  ASSERT_FALSE((*log)->NeedsSnapshot(5));
  const KeyHash extra = Key(1000);
  ASSERT_TRUE(reopened->InsertIfNew(extra));
  (*log)->Record(extra);
  meta_ = (*log)->MetaAfterAppend();
  ASSERT_TRUE((*log)->Append(5).ok());
  (*log)->AppendCommitted();
  std::unique_ptr<ScalableBloomFilter> again;
  auto log2 = Reopen(&again);
  ASSERT_TRUE(log2.ok()) << log2.status().ToString();
  EXPECT_EQ((*log2)->generation(), 5u);
  EXPECT_EQ(CountPresent(*again, 0, 250), 250);
  EXPECT_TRUE(again->MayContain(extra));
}

TEST_F(BloomDeltaLogTest, NoCommittedLogMeansTheSnapshotAlone) {
  std::unique_ptr<ScalableBloomFilter> reopened;
  auto log = Reopen(&reopened);  // meta "1 0": nothing to read (there is no file)
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->generation(), 1u);
  meta_.clear();  // a state from before delta logs
  log = Reopen(&reopened);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->generation(), 1u);
}

// A crash between the append and the COMMIT: the record (whole or torn) is past the committed
// length and never seen; the next append overwrites it.
TEST_F(BloomDeltaLogTest, UncommittedTrailingRecordIsIgnoredThenOverwritten) {
  InsertKeys(0, 100);
  Checkpoint();
  InsertKeys(100, 300);
  Checkpoint(/*commit=*/false);
  const std::string whole = ReadFile(path_);
  for (size_t cut : {whole.size(), whole.size() - 1, whole.size() - 100}) {
    SCOPED_TRACE(cut);
    WriteFile(path_, whole.substr(0, cut));
    std::unique_ptr<ScalableBloomFilter> reopened;
    auto log = Reopen(&reopened);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    EXPECT_EQ((*log)->generation(), 2u);
    EXPECT_EQ(CountPresent(*reopened, 0, 100), 100);
    EXPECT_LE(CountPresent(*reopened, 100, 300), 2);  // false positives only
  }
  // The reopened owner checkpoints generation 3 again, over the leftover bytes.
  std::unique_ptr<ScalableBloomFilter> reopened;
  auto log = Reopen(&reopened);
  ASSERT_TRUE(log.ok());
  const KeyHash key = Key(5000);
  ASSERT_TRUE(reopened->InsertIfNew(key));
  (*log)->Record(key);
  meta_ = (*log)->MetaAfterAppend();
  ASSERT_TRUE((*log)->Append(3).ok());
  (*log)->AppendCommitted();
  EXPECT_EQ(fs::file_size(path_), BloomDeltaLog::kHeaderBytes + 2 * 40 + 101 * 16);
  std::unique_ptr<ScalableBloomFilter> again;
  auto log2 = Reopen(&again);
  ASSERT_TRUE(log2.ok()) << log2.status().ToString();
  EXPECT_EQ((*log2)->generation(), 3u);
  EXPECT_TRUE(again->MayContain(key));
}

TEST_F(BloomDeltaLogTest, TornOrDamagedCommittedRecordIsCorruption) {
  InsertKeys(0, 100);
  Checkpoint();
  InsertKeys(100, 200);
  Checkpoint();
  const std::string whole = ReadFile(path_);
  auto expect_corruption = [&](const std::string& bytes, std::string_view why) {
    SCOPED_TRACE(why);
    WriteFile(path_, bytes);
    std::unique_ptr<ScalableBloomFilter> reopened;
    auto log = Reopen(&reopened);
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.status().code(), StatusCode::kCorruption) << log.status().ToString();
    EXPECT_NE(log.status().message().find(path_.string()), std::string::npos)
        << log.status().ToString();
    EXPECT_NE(log.status().message().find(why), std::string::npos) << log.status().ToString();
    EXPECT_EQ(ReadFile(path_), bytes);  // never rewritten
  };
  expect_corruption(whole.substr(0, whole.size() - 1), "truncated");
  std::string damaged = whole;
  damaged[BloomDeltaLog::kHeaderBytes + 40 + 16 * 50] ^= 0x20;  // a key of the first record
  expect_corruption(damaged, "checksum mismatch");
  damaged = whole;
  damaged[20] ^= 0x01;  // the header's identity
  expect_corruption(damaged, "header is damaged");
  damaged = whole;
  damaged[0] = 'X';
  expect_corruption(damaged, "bad magic");
  fs::remove(path_);
  std::unique_ptr<ScalableBloomFilter> reopened;
  auto log = Reopen(&reopened);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), StatusCode::kCorruption);
  EXPECT_NE(log.status().message().find("missing"), std::string::npos) << log.status().ToString();
}

TEST_F(BloomDeltaLogTest, ForeignIdentityIsCorruption) {
  InsertKeys(0, 10);
  Checkpoint();
  std::unique_ptr<ScalableBloomFilter> reopened;
  auto log = Reopen(&reopened, Identity(99));
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), StatusCode::kCorruption);
  EXPECT_NE(log.status().message().find("belongs to state " + identity_.ToHex()), std::string::npos)
      << log.status().ToString();
  EXPECT_NE(log.status().message().find(Identity(99).ToHex()), std::string::npos);
}

// Records of another state spliced in with a valid header and checksums: each record carries its
// identity and generation, so a spliced record or a missing generation is found.
TEST_F(BloomDeltaLogTest, GapOrForeignRecordIsCorruption) {
  InsertKeys(0, 10);
  Checkpoint();  // generation 2
  InsertKeys(10, 20);
  Checkpoint();  // 3
  const std::string whole = ReadFile(path_);
  const size_t first = BloomDeltaLog::kHeaderBytes;
  const size_t record = 40 + 10 * 16;
  ASSERT_EQ(whole.size(), first + 2 * record);
  auto reseal = [&](std::string* bytes, size_t at) {
    const uint64_t sum = XXH3_64bits(bytes->data() + at, record - 8);
    for (int i = 0; i < 8; ++i) (*bytes)[at + record - 8 + i] = static_cast<char>(sum >> (8 * i));
  };
  auto expect_corruption = [&](const std::string& bytes, std::string_view why) {
    SCOPED_TRACE(why);
    WriteFile(path_, bytes);
    std::unique_ptr<ScalableBloomFilter> reopened;
    auto log = Reopen(&reopened);
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.status().code(), StatusCode::kCorruption);
    EXPECT_NE(log.status().message().find(why), std::string::npos) << log.status().ToString();
  };
  std::string gap = whole;
  gap[first + record] = 4;  // the second record claims generation 4
  reseal(&gap, first + record);
  expect_corruption(gap, "of generation 4 where 3 was expected");
  std::string foreign = whole;
  foreign[first + record + 8] ^= 0x40;  // the second record's identity
  reseal(&foreign, first + record);
  expect_corruption(foreign, "belongs to state");
}

TEST_F(BloomDeltaLogTest, LogOfAnotherSnapshotIsCorruption) {
  InsertKeys(0, 10);
  Checkpoint();
  // bloom.snap replaced by a snapshot of another generation than the log extends.
  ASSERT_TRUE(bloom_->Save(snap_.string(), /*generation=*/7).ok());
  std::unique_ptr<ScalableBloomFilter> reopened;
  auto log = Reopen(&reopened);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), StatusCode::kCorruption);
  EXPECT_NE(log.status().message().find(snap_.string() +
                                        " is not the one state.db expects (generation 7"),
            std::string::npos)
      << log.status().ToString();
  // An older snapshot (generation 0; the log extends 1) is stale.
  ASSERT_TRUE(bloom_->Save(snap_.string(), /*generation=*/0).ok());
  log = Reopen(&reopened);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find(snap_.string() + " is stale (generation 0"),
            std::string::npos)
      << log.status().ToString();
}

// Past 1/kCompactionDivisor of the filter's size the next checkpoint must be a full snapshot;
// Record stops holding keys then (they go into the snapshot), so memory stays bounded.
TEST_F(BloomDeltaLogTest, CompactionThresholdBoundsTheLogAndThePendingKeys) {
  const uint64_t max_keys = bloom_->bytes() / BloomDeltaLog::kCompactionDivisor / 16;
  InsertKeys(0, max_keys / 2);
  EXPECT_FALSE(log_->NeedsSnapshot(2));
  Checkpoint();
  InsertKeys(max_keys / 2, max_keys);
  EXPECT_TRUE(log_->NeedsSnapshot(3));  // the log would pass the threshold
  EXPECT_FALSE(log_->Append(3).ok());
  InsertKeys(max_keys, 2 * max_keys);
  EXPECT_EQ(log_->pending_keys(), 0u);  // overflowed: nothing held
  EXPECT_TRUE(log_->NeedsSnapshot(3));
  // The owner writes the full snapshot and commits it; the log starts over.
  ASSERT_TRUE(bloom_->Save(snap_.string(), 3).ok());
  log_->SnapshotCommitted(3, *bloom_);
  meta_ = BloomDeltaLog::MetaAfterSnapshot(3);
  EXPECT_FALSE(log_->NeedsSnapshot(4));
  InsertKeys(2 * max_keys, 2 * max_keys + 10);
  Checkpoint();  // 4: a new file, based on the snapshot of 3
  EXPECT_EQ(fs::file_size(path_), BloomDeltaLog::kHeaderBytes + 40 + 10 * 16);
  std::unique_ptr<ScalableBloomFilter> reopened;
  auto log = Reopen(&reopened);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->generation(), 4u);
  EXPECT_EQ(CountPresent(*reopened, 0, 2 * max_keys + 10), static_cast<int>(2 * max_keys + 10));
}

// A generation the owner committed without the log (SeenFilter's standalone exact batches) breaks
// the chain: the next checkpoint must be a full snapshot.
TEST_F(BloomDeltaLogTest, BrokenChainNeedsASnapshot) {
  InsertKeys(0, 10);
  EXPECT_FALSE(log_->NeedsSnapshot(2));
  EXPECT_TRUE(log_->NeedsSnapshot(3));
  auto detached = BloomDeltaLog::Detached(path_.string(), identity_, *bloom_);
  EXPECT_TRUE(detached->NeedsSnapshot(2));
}

}  // namespace
}  // namespace urlsieve
