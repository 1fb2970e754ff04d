#include "dedup/sqlite_db.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

class SqliteDbTest : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_{"urlsieve_sqlite"};
  const std::filesystem::path& dir_ = scratch_.path();
};

TEST_F(SqliteDbTest, RoundTripsRowsThroughPreparedStatements) {
  auto db = SqliteDb::Open((dir_ / "t.db").string());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)").ok());
  auto insert = (*db)->Prepare("INSERT INTO t(k, v) VALUES(?, ?)");
  ASSERT_TRUE(insert.ok());
  ASSERT_TRUE((*db)->Begin().ok());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(insert->BindInt64(1, i).ok());
    std::string value = "v";  // not "v" + ...: GCC 12 -O3 warns -Wrestrict wrongly on it
    value += std::to_string(i);
    ASSERT_TRUE(insert->BindText(2, value).ok());
    ASSERT_TRUE(insert->Run().ok());
  }
  ASSERT_TRUE((*db)->Commit().ok());
  auto select = (*db)->Prepare("SELECT v FROM t WHERE k = ?");
  ASSERT_TRUE(select.ok());
  ASSERT_TRUE(select->BindInt64(1, 7).ok());
  auto row = select->Step();
  ASSERT_TRUE(row.ok());
  ASSERT_TRUE(*row);
  EXPECT_EQ(select->ColumnText(0), "v7");
}

TEST_F(SqliteDbTest, ForeignFileIsAClearErrorAndIsNotOverwritten) {
  const auto path = dir_ / "not_a_db";
  const std::string garbage(4096, 'x');
  std::ofstream(path) << garbage;
  auto db = SqliteDb::Open(path.string());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kCorruption) << db.status().ToString();
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, garbage);
}

TEST_F(SqliteDbTest, DuplicateKeyIsAnErrorValue) {
  auto db = SqliteDb::Open((dir_ / "t.db").string());
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t(k INTEGER PRIMARY KEY)").ok());
  ASSERT_TRUE((*db)->Exec("INSERT INTO t VALUES(1)").ok());
  EXPECT_FALSE((*db)->Exec("INSERT INTO t VALUES(1)").ok());
}

}  // namespace
}  // namespace urlsieve
