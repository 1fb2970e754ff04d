// The content-seen sets: LocalContentSeenSet through the contract (tests/dedup/
// content_seen_set_contract.h), in memory and checkpointed into a real SQLite file; its own
// behaviour (checkpoints inside the caller's transaction, a rolled-back checkpoint, a corrupt
// table, memory); and the fingerprint helpers of content_seen_set.h (WARC payload digests, XXH3).
#include "dedup/content/content_seen_set.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "base/sqlite_db.h"
#include "dedup/content/local_content_seen_set.h"
#include "tests/dedup/content_seen_set_contract.h"

namespace urlsieve::testing {
namespace {

// A LocalContentSeenSet in the SQLite file scratch/state.db, reopened (file and set) by each Open;
// Persist is the crawl's checkpoint: Checkpoint inside a transaction, COMMIT.
class LocalSqliteStore : public ContentSeenSetStore {
 public:
  explicit LocalSqliteStore(std::filesystem::path path) : path_(std::move(path)) {}

  Result<std::unique_ptr<ContentSeenSet>> Open(const ContentSeenOptions& options) override {
    db_.reset();
    auto db = SqliteDb::Open(path_.string());
    if (!db.ok()) return db.status();
    db_ = std::move(*db);
    auto set = LocalContentSeenSet::Open(db_.get(), options);
    if (!set.ok()) return set.status();
    return std::unique_ptr<ContentSeenSet>(std::move(*set));
  }

  Status Persist(ContentSeenSet& set) override {
    URLSIEVE_RETURN_IF_ERROR(db_->Begin());
    Status status = static_cast<LocalContentSeenSet&>(set).Checkpoint(*db_);
    if (status.ok()) status = db_->Commit();
    if (!status.ok()) db_->Rollback();
    return status;
  }

 private:
  std::filesystem::path path_;
  std::unique_ptr<SqliteDb> db_;
};

class LocalMemoryStore : public ContentSeenSetStore {
 public:
  Result<std::unique_ptr<ContentSeenSet>> Open(const ContentSeenOptions& options) override {
    auto set = LocalContentSeenSet::Open(nullptr, options);
    if (!set.ok()) return set.status();
    return std::unique_ptr<ContentSeenSet>(std::move(*set));
  }
  Status Persist(ContentSeenSet&) override { return Status::Ok(); }
};

INSTANTIATE_TEST_SUITE_P(
    Local, ContentSeenSetContractTest,
    ::testing::Values(ContentSeenSetImplementation{"LocalSqlite",
                                                   [](const std::filesystem::path& scratch)
                                                       -> std::unique_ptr<ContentSeenSetStore> {
                                                     return std::make_unique<LocalSqliteStore>(
                                                         scratch / "state.db");
                                                   }},
                      ContentSeenSetImplementation{
                          "LocalInMemory",
                          [](const std::filesystem::path&) -> std::unique_ptr<ContentSeenSetStore> {
                            return std::make_unique<LocalMemoryStore>();
                          },
                          /*persistent=*/false}),
    ContentSeenSetImplementationName);

// --- Fingerprint helpers ---

TEST(ContentDigestTest, WarcSha1DigestGivesItsFirstEightBytes) {
  // sha1("") and sha1("hello world"), base32 as WARC writers record them.
  EXPECT_EQ(DigestFromWarcPayloadDigest("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"),
            0xda39a3ee5e6b4b0dULL);
  EXPECT_EQ(DigestFromWarcPayloadDigest("sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN"),
            0x2aae6c35c94fcfb4ULL);
  EXPECT_EQ(DigestFromWarcPayloadDigest("sha1:V4SHSLAUXKSBZFRXNIJ6YITIVSAXQOBE"),
            0xaf24792c14baa41cULL);
  // The label's and the letters' case do not matter.
  EXPECT_EQ(DigestFromWarcPayloadDigest("SHA1:3i42h3s6nnfq2msvx7xzkyayscx5qbyj"),
            0xda39a3ee5e6b4b0dULL);
}

TEST(ContentDigestTest, OtherFormsAreNotDigests) {
  for (std::string_view bad :
       {"", "sha1:", "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
        "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBY",    // 31 characters
        "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJA",  // 33
        "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBY1",   // '1' is not base32
        "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QB=J", "sha256:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
        "sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709",  // hex
        " sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"}) {
    EXPECT_FALSE(DigestFromWarcPayloadDigest(bad)) << bad;
  }
}

TEST(ContentDigestTest, PayloadDigestIsXxh3) {
  EXPECT_EQ(PayloadDigest(""), 0x2d06800538d394c2ULL);  // XXH3-64 of nothing, seed 0
  EXPECT_EQ(PayloadDigest("<html>a</html>"), PayloadDigest(std::string("<html>a</html>")));
  EXPECT_NE(PayloadDigest("<html>a</html>"), PayloadDigest("<html>b</html>"));
  EXPECT_NE(PayloadDigest(std::string_view("a\0", 2)), PayloadDigest("a"));
}

// --- LocalContentSeenSet ---

class LocalContentSeenSetTest : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteDb> OpenDb() {
    auto db = SqliteDb::Open((scratch_.path() / "state.db").string());
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(*db) : nullptr;
  }
  static ContentFingerprint Fp(uint64_t digest, std::optional<uint64_t> simhash = std::nullopt) {
    return ContentFingerprint{digest, simhash};
  }

  ScratchDir scratch_{"local_content_seen"};
};

TEST_F(LocalContentSeenSetTest, CheckpointWritesRowsIntoTheCallersTransaction) {
  auto db = OpenDb();
  ASSERT_NE(db, nullptr);
  auto set = LocalContentSeenSet::Open(db.get(), {});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_TRUE((*set)->Test(Fp(7, 0xabc), {"http://a.example/", "rec"}).ok());
  ASSERT_TRUE((*set)->Test(Fp(8, 0xabd), {"http://b.example/", ""}).ok());  // near: no simhash
  ASSERT_TRUE(db->Begin().ok());
  ASSERT_TRUE((*set)->Checkpoint(*db).ok());
  ASSERT_TRUE(db->Commit().ok());
  auto rows =
      db->Prepare("SELECT value, digest, simhash, id, data FROM content_seen ORDER BY value");
  ASSERT_TRUE(rows.ok());
  ASSERT_TRUE(*rows->Step());
  EXPECT_EQ(rows->ColumnInt64(1), 7);
  EXPECT_EQ(rows->ColumnInt64(2), 0xabc);
  EXPECT_EQ(rows->ColumnText(3), "http://a.example/");
  EXPECT_EQ(rows->ColumnBlob(4), "rec");
  ASSERT_TRUE(*rows->Step());
  EXPECT_EQ(rows->ColumnInt64(1), 8);
  EXPECT_TRUE(rows->ColumnIsNull(2));
  EXPECT_EQ(rows->ColumnText(3), "http://b.example/");
  EXPECT_FALSE(*rows->Step());
}

// The caller's transaction rolls back: the copies stay in memory and the next checkpoint writes
// them, so a reopen after it has every page.
TEST_F(LocalContentSeenSetTest, ARolledBackCheckpointIsWrittenByTheNextOne) {
  {
    auto db = OpenDb();
    ASSERT_NE(db, nullptr);
    auto set = LocalContentSeenSet::Open(db.get(), {});
    ASSERT_TRUE(set.ok());
    ASSERT_TRUE((*set)->Test(Fp(1), {"a", "x"}).ok());
    ASSERT_TRUE(db->Begin().ok());
    ASSERT_TRUE(
        db->Exec("INSERT INTO content_seen(value, digest, id) VALUES (100, 5, 'bad')").ok());
    ASSERT_TRUE(db->Rollback().ok());
    // A checkpoint that fails inside the transaction (the table is gone) keeps the copies.
    ASSERT_TRUE(db->Begin().ok());
    ASSERT_TRUE(db->Exec("ALTER TABLE content_seen RENAME TO content_seen_away").ok());
    EXPECT_FALSE((*set)->Checkpoint(*db).ok());
    ASSERT_TRUE(db->Rollback().ok());
    ASSERT_TRUE(db->Begin().ok());
    ASSERT_TRUE((*set)->Checkpoint(*db).ok());
    ASSERT_TRUE(db->Commit().ok());
  }
  auto db = OpenDb();
  auto set = LocalContentSeenSet::Open(db.get(), {});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto verdict = (*set)->Test(Fp(1), {"b", ""});
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict->kind, ContentVerdict::Kind::kExact);
  EXPECT_EQ(verdict->first.data, "x");
}

TEST_F(LocalContentSeenSetTest, CheckpointWithoutItsDatabaseIsRefused) {
  auto memory = LocalContentSeenSet::Open(nullptr, {});
  ASSERT_TRUE(memory.ok());
  auto db = OpenDb();
  EXPECT_EQ((*memory)->Checkpoint(*db).code(), StatusCode::kInvalidArgument);
}

TEST_F(LocalContentSeenSetTest, BadMaxDistanceIsInvalid) {
  for (int k : {-1, 8, 64}) {
    ContentSeenOptions options;
    options.max_distance = k;
    auto set = LocalContentSeenSet::Open(nullptr, options);
    ASSERT_FALSE(set.ok()) << k;
    EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
  }
  ContentSeenOptions seven;
  seven.max_distance = 7;
  EXPECT_TRUE(LocalContentSeenSet::Open(nullptr, seven).ok());
}

TEST_F(LocalContentSeenSetTest, GarbageInTheTableIsCorruptionNamingIt) {
  const std::vector<std::string> garbage = {
      // Text where a digest belongs.
      "CREATE TABLE content_seen(value INTEGER PRIMARY KEY, digest INTEGER NOT NULL, "
      "simhash INTEGER, id TEXT, data BLOB); "
      "INSERT INTO content_seen VALUES (1, 'not a number', NULL, 'a', NULL)",
      // A blob id.
      "CREATE TABLE content_seen(value INTEGER PRIMARY KEY, digest INTEGER NOT NULL, "
      "simhash INTEGER, id TEXT, data BLOB); "
      "INSERT INTO content_seen VALUES (1, 5, 3.5, 'a', NULL)",
      // Another table of that name.
      "CREATE TABLE content_seen(url TEXT)",
      // One digest twice.
      "CREATE TABLE content_seen(value INTEGER PRIMARY KEY, digest INTEGER NOT NULL, "
      "simhash INTEGER, id TEXT, data BLOB); "
      "INSERT INTO content_seen VALUES (1, 5, NULL, 'a', NULL), (2, 5, NULL, 'b', NULL)",
      // A value beyond 48 bits.
      "CREATE TABLE content_seen(value INTEGER PRIMARY KEY, digest INTEGER NOT NULL, "
      "simhash INTEGER, id TEXT, data BLOB); "
      "INSERT INTO content_seen VALUES (281474976710656, 5, NULL, 'a', NULL)",
  };
  for (size_t i = 0; i < garbage.size(); ++i) {
    std::filesystem::remove(scratch_.path() / "state.db");
    auto db = OpenDb();
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->Exec(garbage[i]).ok()) << garbage[i];
    auto set = LocalContentSeenSet::Open(db.get(), {});
    ASSERT_FALSE(set.ok()) << i;
    EXPECT_EQ(set.status().code(), StatusCode::kCorruption) << set.status().ToString();
    EXPECT_NE(set.status().message().find("content_seen"), std::string::npos)
        << set.status().ToString();
  }
}

// An index that names a copy whose row is gone (the table edited by hand): Corruption, not a
// verdict with an empty first.
TEST_F(LocalContentSeenSetTest, AMissingRowIsCorruption) {
  auto db = OpenDb();
  auto set = LocalContentSeenSet::Open(db.get(), {});
  ASSERT_TRUE(set.ok());
  ASSERT_TRUE((*set)->Test(Fp(3), {"a", ""}).ok());
  ASSERT_TRUE(db->Begin().ok());
  ASSERT_TRUE((*set)->Checkpoint(*db).ok());
  ASSERT_TRUE(db->Commit().ok());
  ASSERT_TRUE(db->Exec("DELETE FROM content_seen").ok());
  auto verdict = (*set)->Test(Fp(3), {"b", ""});
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.status().code(), StatusCode::kCorruption);
}

// Memory: the copies since the last checkpoint, then only the indexes.
TEST_F(LocalContentSeenSetTest, CheckpointDropsTheCopiesFromMemory) {
  auto db = OpenDb();
  auto set = LocalContentSeenSet::Open(db.get(), {});
  ASSERT_TRUE(set.ok());
  const uint64_t empty = (*set)->memory_bytes();
  for (uint64_t i = 0; i < 1000; ++i) {
    ASSERT_TRUE((*set)
                    ->Test(Fp(i * 0x9e3779b97f4a7c15ULL, i * 0xc2b2ae3d27d4eb4fULL),
                           {"http://example.com/page/" + std::to_string(i), std::string(200, 'w')})
                    .ok());
  }
  const uint64_t with_copies = (*set)->memory_bytes();
  EXPECT_GT(with_copies, empty + 1000 * 200);
  ASSERT_TRUE(db->Begin().ok());
  ASSERT_TRUE((*set)->Checkpoint(*db).ok());
  ASSERT_TRUE(db->Commit().ok());
  // The copies (over 200 bytes each) are gone; the indexes' entries stay.
  EXPECT_LT((*set)->memory_bytes(), with_copies - 1000 * 200);
  auto verdict = (*set)->Test(Fp(5 * 0x9e3779b97f4a7c15ULL), {"other", ""});
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict->first.id, "http://example.com/page/5");
  EXPECT_EQ(verdict->first.data, std::string(200, 'w'));
}

}  // namespace
}  // namespace urlsieve::testing
