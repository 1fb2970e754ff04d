// A state keeps the key function (CanonicalizeOptions::key_version) it was created with, so a
// newer canonicalizer never changes the keys under an existing state.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/sqlite_db.h"
#include "dedup/seen_filter.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

class SeenFilterKeyVersionTest : public ::testing::Test {
 protected:
  SeenFilterOptions Options(int key_version = kCurrentKeyVersion) const {
    SeenFilterOptions o;
    o.capacity = 1000;
    o.state_dir = dir_.string();
    o.exact = true;
    o.canonicalize.key_version = key_version;
    return o;
  }
  std::string StoredCanonicalize() const {
    auto db = SqliteDb::Open((dir_ / "state.db").string(), SqliteDb::Options{.wal = false});
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    auto read = (*db)->Prepare("SELECT value FROM urlsieve_meta WHERE key = 'canonicalize'");
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    auto row = read->Step();
    EXPECT_TRUE(row.ok() && *row);
    return std::string(read->ColumnText(0));
  }

  testing::ScratchDir scratch_{"urlsieve_key_version"};
  const fs::path dir_ = scratch_.path() / "state";  // created by the filter
};

TEST_F(SeenFilterKeyVersionTest, NewStateRecordsTheCurrentKeyVersion) {
  {
    auto f = SeenFilter::Open(Options());
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    ASSERT_TRUE((*f)->Save().ok());
  }
  EXPECT_EQ(StoredCanonicalize().rfind("key_version=2,sort_query=0,", 0), 0u)
      << StoredCanonicalize();
  auto f = SeenFilter::Open(Options());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->options().canonicalize.key_version, 2);
  EXPECT_TRUE((*f)->notices().empty());
}

TEST_F(SeenFilterKeyVersionTest, VersionOneStateKeepsItsKeys) {
  // A state as urlsieve wrote it before key version 2: no version in its options string.
  {
    auto f = SeenFilter::Open(Options(1));
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    auto inserted = (*f)->InsertIfNew("http://a.example/p?q='x'");
    ASSERT_TRUE(inserted.ok() && *inserted);
    ASSERT_TRUE((*f)->Save().ok());
  }
  EXPECT_EQ(StoredCanonicalize().rfind("sort_query=0,", 0), 0u) << StoredCanonicalize();

  // Opened by today's build, asking for the current version: the stored one wins, and says why.
  auto f = SeenFilter::Open(Options());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->options().canonicalize.key_version, 1);
  ASSERT_EQ((*f)->notices().size(), 1u);
  EXPECT_NE((*f)->notices()[0].text.find("canonicalizer version 1"), std::string::npos)
      << (*f)->notices()[0].text;
  auto seen = (*f)->InsertIfNew("http://a.example/p?q='x'");
  ASSERT_TRUE(seen.ok());
  EXPECT_FALSE(*seen) << "a URL seen under key version 1 was reported new";
  auto other = (*f)->InsertIfNew("http://a.example/p?q=%27x%27");  // two keys in version 1
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(*other);
}

TEST_F(SeenFilterKeyVersionTest, StateOfANewerKeyVersionIsRefusedAndUntouched) {
  {
    auto f = SeenFilter::Open(Options());
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    ASSERT_TRUE((*f)->Save().ok());
  }
  {
    auto db = SqliteDb::Open((dir_ / "state.db").string(), SqliteDb::Options{.wal = false});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("UPDATE urlsieve_meta SET value = replace(value, 'key_version=2,', "
                           "'key_version=3,') WHERE key = 'canonicalize'")
                    .ok());
  }
  const std::string stored = StoredCanonicalize();
  ASSERT_EQ(stored.rfind("key_version=3,", 0), 0u) << stored;
  auto f = SeenFilter::Open(Options());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kUnsupported) << f.status().ToString();
  EXPECT_NE(f.status().message().find("canonicalizer version 3"), std::string::npos)
      << f.status().ToString();
  EXPECT_EQ(StoredCanonicalize(), stored);
}

}  // namespace
}  // namespace urlsieve
