#include "dedup/bloom/bloom_snapshot.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dedup/bloom/scalable_bloom_filter.h"
#include "tests/dedup/bloom_test_util.h"
#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::WriteFile;

class BloomSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_ + "/seen.bloom";
    BloomOptions options;
    options.capacity = 2'000;
    options.fp_rate = 1e-3;
    filter_ = std::move(ScalableBloomFilter::Create(options)).value();
    keys_ = RandomKeys(7'000, 7);  // 2'000 + 4'000 < 7'000: three layers
    for (const KeyHash& k : keys_) filter_->InsertIfNew(k);
  }

  // Loading `bytes` fails with `code`, and leaves the file byte-for-byte as it was.
  void ExpectLoadFails(const std::string& bytes, StatusCode code) {
    WriteFile(path_, bytes);
    auto loaded = ScalableBloomFilter::Load(path_);
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().code(), code) << loaded.status().ToString();
    EXPECT_EQ(ReadFile(path_), bytes);
  }

  void ExpectSameAnswers(const ScalableBloomFilter& a, const ScalableBloomFilter& b) {
    for (const KeyHash& k : keys_) ASSERT_TRUE(b.MayContain(k));
    for (const KeyHash& k : RandomKeys(200'000, 8)) ASSERT_EQ(a.MayContain(k), b.MayContain(k));
  }

  std::vector<std::string> DirEntries() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    return names;
  }

  testing::ScratchDir scratch_{"bloom_snapshot"};
  const std::string dir_ = scratch_.path().string();
  std::string path_;
  std::unique_ptr<ScalableBloomFilter> filter_;
  std::vector<KeyHash> keys_;
};

TEST_F(BloomSnapshotTest, RoundTripKeepsAnswersStatsAndGeneration) {
  ASSERT_TRUE(filter_->Save(path_, 42).ok());
  uint64_t generation = 0;
  auto loaded = ScalableBloomFilter::Load(path_, &generation);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(generation, 42u);
  ExpectSameAnswers(*filter_, **loaded);
  BloomStats before = filter_->Stats();
  BloomStats after = (*loaded)->Stats();
  EXPECT_EQ(after.layers, 3u);
  EXPECT_EQ(after.layers, before.layers);
  EXPECT_EQ(after.inserted, before.inserted);
  EXPECT_EQ(after.bytes, before.bytes);
  EXPECT_EQ(after.fill_ratio, before.fill_ratio);
  EXPECT_EQ((*loaded)->options().capacity, 2'000u);
  EXPECT_EQ((*loaded)->options().fp_rate, 1e-3);
  // The loaded filter keeps working: old keys are not new, new keys are, and it grows on.
  for (const KeyHash& k : keys_) ASSERT_FALSE((*loaded)->InsertIfNew(k));
  for (const KeyHash& k : RandomKeys(10'000, 9)) (*loaded)->InsertIfNew(k);
  EXPECT_EQ((*loaded)->Stats().layers, 4u);                         // 2k + 4k + 8k < 17k
  EXPECT_EQ(DirEntries(), std::vector<std::string>{"seen.bloom"});  // no temp file left
}

TEST_F(BloomSnapshotTest, SaveReplacesAnExistingSnapshot) {
  ASSERT_TRUE(filter_->Save(path_, 1).ok());
  const KeyHash extra{123, 456};
  ASSERT_TRUE(filter_->InsertIfNew(extra));
  ASSERT_TRUE(filter_->Save(path_, 2).ok());
  uint64_t generation = 0;
  auto loaded = ScalableBloomFilter::Load(path_, &generation);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(generation, 2u);
  EXPECT_TRUE((*loaded)->MayContain(extra));
}

TEST_F(BloomSnapshotTest, MissingFileIsNotFound) {
  auto loaded = ScalableBloomFilter::Load(dir_ + "/absent.bloom");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kNotFound);
}

TEST_F(BloomSnapshotTest, TruncatedFilesAreCorruption) {
  ASSERT_TRUE(filter_->Save(path_).ok());
  const std::string good = ReadFile(path_);
  for (size_t size : {size_t{0}, size_t{5}, size_t{100}, size_t{127}, size_t{200}, size_t{320},
                      good.size() / 2, good.size() - 1}) {
    SCOPED_TRACE(size);
    ExpectLoadFails(good.substr(0, size), StatusCode::kCorruption);
  }
  ExpectLoadFails(good + "x", StatusCode::kCorruption);  // trailing garbage
}

TEST_F(BloomSnapshotTest, BitFlipsAnywhereAreCorruption) {
  ASSERT_TRUE(filter_->Save(path_).ok());
  const std::string good = ReadFile(path_);
  // Every third bit of the header and layer records (the magic and version have their own
  // diagnosis below), then bits spread over the bit arrays.
  std::vector<size_t> bits;
  for (size_t bit = 12 * 8; bit < 320 * 8; bit += 3) bits.push_back(bit);
  for (size_t bit = 320 * 8; bit < good.size() * 8; bit += good.size() * 8 / 97)
    bits.push_back(bit);
  bits.push_back(good.size() * 8 - 1);
  for (size_t bit : bits) {
    SCOPED_TRACE(bit);
    std::string bad = good;
    bad[bit / 8] = static_cast<char>(bad[bit / 8] ^ (1 << (bit % 8)));
    WriteFile(path_, bad);
    auto loaded = ScalableBloomFilter::Load(path_);
    ASSERT_FALSE(loaded.ok());
    // A flip in the hash id is caught by the header checksum first.
    ASSERT_EQ(loaded.status().code(), StatusCode::kCorruption) << loaded.status().ToString();
    ASSERT_EQ(ReadFile(path_), bad);
  }
}

TEST_F(BloomSnapshotTest, ForeignFilesAreCorruption) {
  ExpectLoadFails("", StatusCode::kCorruption);
  ExpectLoadFails("SQLite format 3\0 and then some more bytes", StatusCode::kCorruption);
  ASSERT_TRUE(filter_->Save(path_).ok());
  std::string bad = ReadFile(path_);
  bad[0] = 'X';
  ExpectLoadFails(bad, StatusCode::kCorruption);
}

// Rewrites the header checksum, as a writer of another version or hash would have.
void Reseal(std::string* bytes) {
  const uint32_t header_bytes = static_cast<uint8_t>((*bytes)[12]) |
                                static_cast<uint32_t>(static_cast<uint8_t>((*bytes)[13])) << 8;
  std::string header = bytes->substr(0, header_bytes);
  std::memset(header.data() + 120, 0, 8);
  const uint64_t sum = XXH3_64bits(header.data(), header.size());
  for (int i = 0; i < 8; ++i) (*bytes)[120 + i] = static_cast<char>(sum >> (8 * i));
}

TEST_F(BloomSnapshotTest, NewerVersionOrOtherHashIsUnsupported) {
  ASSERT_TRUE(filter_->Save(path_).ok());
  const std::string good = ReadFile(path_);
  std::string newer = good;
  newer[8] = static_cast<char>(kBloomSnapshotVersion + 1);
  ExpectLoadFails(newer, StatusCode::kUnsupported);  // even without a valid checksum
  Reseal(&newer);
  ExpectLoadFails(newer, StatusCode::kUnsupported);
  std::string other_hash = good;
  std::memcpy(other_hash.data() + 16, "xxh64\0\0\0", 8);
  Reseal(&other_hash);
  ExpectLoadFails(other_hash, StatusCode::kUnsupported);
  std::string version0 = good;
  version0[8] = 0;
  ExpectLoadFails(version0, StatusCode::kCorruption);
}

// Format 2 records the state's identity beside the generation (offset 88, covered by the header
// checksum); a version-1 file, which has zeros there, still loads, with a zero identity.
TEST_F(BloomSnapshotTest, IdentityRoundTripsAndVersion1FilesStillLoad) {
  StateIdentity identity;
  for (size_t i = 0; i < identity.bytes.size(); ++i)
    identity.bytes[i] = static_cast<uint8_t>(i + 1);
  ASSERT_TRUE(filter_->Save(path_, 7, identity).ok());
  const std::string stamped = ReadFile(path_);
  EXPECT_EQ(stamped[8], 2);
  EXPECT_EQ(stamped.substr(88, 16), std::string(identity.bytes.begin(), identity.bytes.end()));
  uint64_t generation = 0;
  StateIdentity loaded_identity;
  auto loaded = ScalableBloomFilter::Load(path_, &generation, &loaded_identity);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(generation, 7u);
  EXPECT_EQ(loaded_identity, identity);

  std::string flipped = stamped;  // the identity is covered by the header checksum
  flipped[95] ^= 1;
  ExpectLoadFails(flipped, StatusCode::kCorruption);

  ASSERT_TRUE(filter_->Save(path_, 5).ok());
  std::string version1 = ReadFile(path_);
  version1[8] = 1;
  Reseal(&version1);
  WriteFile(path_, version1);
  loaded_identity = identity;
  loaded = ScalableBloomFilter::Load(path_, &generation, &loaded_identity);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(generation, 5u);
  EXPECT_TRUE(loaded_identity.IsZero());
  ExpectSameAnswers(*filter_, **loaded);
}

TEST_F(BloomSnapshotTest, FailedSaveLeavesThePreviousSnapshotValid) {
  ASSERT_TRUE(filter_->Save(path_, 1).ok());
  const std::string good = ReadFile(path_);
  ASSERT_GT(good.size(), 8'192u);
  // Make the next save fail half-way: the file-size limit stops its writes (EFBIG).
  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct sigaction ignore = {}, old_action = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old_action), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 8'192;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  for (const KeyHash& k : RandomKeys(1'000, 10)) filter_->InsertIfNew(k);
  Status failed = filter_->Save(path_, 2);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  ASSERT_EQ(::sigaction(SIGXFSZ, &old_action, nullptr), 0);

  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.code(), StatusCode::kIoError);
  EXPECT_EQ(ReadFile(path_), good);
  EXPECT_EQ(DirEntries(), std::vector<std::string>{"seen.bloom"});  // the temp file was removed
  uint64_t generation = 0;
  auto loaded = ScalableBloomFilter::Load(path_, &generation);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(generation, 1u);
  for (const KeyHash& k : keys_) ASSERT_TRUE((*loaded)->MayContain(k));
}

TEST_F(BloomSnapshotTest, StrayTempFileFromACrashIsHarmless) {
  ASSERT_TRUE(filter_->Save(path_, 1).ok());
  // What a crash between creating and renaming the temp file leaves behind.
  WriteFile(path_ + ".tmp-ABCDEF", ReadFile(path_).substr(0, 1000));
  auto loaded = ScalableBloomFilter::Load(path_);
  ASSERT_TRUE(loaded.ok());
  ExpectSameAnswers(*filter_, **loaded);
  ASSERT_TRUE(filter_->Save(path_, 2).ok());
  uint64_t generation = 0;
  ASSERT_TRUE(ScalableBloomFilter::Load(path_, &generation).ok());
  EXPECT_EQ(generation, 2u);
  EXPECT_EQ(ReadFile(path_ + ".tmp-ABCDEF").size(), 1000u);  // not ours to delete
}

}  // namespace
}  // namespace urlsieve
