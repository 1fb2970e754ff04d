// FrontierDbTest: the fixture of frontier tests that checkpoint into a real SQLite state database —
// a permissive frontier (no robots, no delay, wide concurrency) on a manual clock, and a scratch
// directory for state.db and spill files.
#ifndef URLSIEVE_TESTS_FRONTIER_FRONTIER_DB_TEST_BASE_H_
#define URLSIEVE_TESTS_FRONTIER_FRONTIER_DB_TEST_BASE_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "base/sqlite_db.h"
#include "frontier/frontier.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {

class FrontierDbTest : public ::testing::Test {
 protected:
  FrontierDbTest() {
    options_.obey_robots = false;
    options_.delay = Clock::Duration::zero();
    options_.per_key_concurrency = 1000;
  }

  std::unique_ptr<Frontier> Make() {
    Result<std::unique_ptr<Frontier>> frontier = Frontier::Open(options_, &clock_);
    EXPECT_TRUE(frontier.ok()) << frontier.status().ToString();
    return frontier.ok() ? std::move(*frontier) : nullptr;
  }
  std::unique_ptr<SqliteDb> OpenDb() {
    Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open((dir_ / "state.db").string());
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(*db) : nullptr;
  }
  // The URLs of the pending set a checkpoint wrote into `db`.
  static std::set<std::string> Table(SqliteDb& db) {
    std::set<std::string> urls;
    Result<SqliteStatement> stmt = db.Prepare("SELECT url FROM frontier_pending");
    EXPECT_TRUE(stmt.ok());
    while (*stmt->Step()) urls.emplace(stmt->ColumnText(0));
    return urls;
  }

  testing::ScratchDir scratch_{"frontier"};
  const std::filesystem::path& dir_ = scratch_.path();
  FrontierOptions options_;
  ManualClock clock_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_TESTS_FRONTIER_FRONTIER_DB_TEST_BASE_H_
