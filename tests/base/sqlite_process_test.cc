#include "base/sqlite_process.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <string>

#include "base/sqlite_db.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

// Each test runs its body in a freshly started copy of this binary (the "threadsafe" death-test
// style re-executes it), where nothing has touched SQLite yet, whatever ran before in this one.
class SqliteProcessTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }

  // Opens a database and writes to it, so that SQLite allocates; the exit code tells the parent
  // what the child saw (0: as expected).
  [[noreturn]] static void OpenAndExit(const std::string& path, SqliteProcessConfig expected,
                                       bool statistics_expected) {
    auto db = SqliteDb::Open(path);
    if (!db.ok()) std::exit(2);
    if (!(*db)->Exec("CREATE TABLE t(v TEXT); INSERT INTO t VALUES (printf('%0500d', 1))").ok()) {
      std::exit(3);
    }
    if (ConfigureSqliteForProcess() != expected) std::exit(4);
    // With the statistics off SQLite counts nothing: sqlite3_memory_used() stays 0.
    if ((sqlite3_memory_used() > 0) != statistics_expected) std::exit(5);
    std::exit(0);
  }

  testing::ScratchDir scratch_{"urlsieve_sqlite_process"};
  const std::string path_ = (scratch_.path() / "t.db").string();
};

TEST_F(SqliteProcessTest, TheFirstOpenTurnsMemoryStatisticsOff) {
  EXPECT_EXIT(OpenAndExit(path_, SqliteProcessConfig::kMemoryStatisticsOff, false),
              ::testing::ExitedWithCode(0), "");
}

TEST_F(SqliteProcessTest, AnApplicationThatInitializedSqliteFirstKeepsItsConfiguration) {
  EXPECT_EXIT(
      {
        if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 1) != SQLITE_OK) std::exit(6);
        if (sqlite3_initialize() != SQLITE_OK) std::exit(7);
        OpenAndExit(path_, SqliteProcessConfig::kKeptTheApplications, true);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace urlsieve
