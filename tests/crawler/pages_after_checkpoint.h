// CheckpointedPages: how many pages a crawl had recorded as of its last checkpoint (the counters
// that checkpoint wrote in OUT/state/state.db, crawler/state/crawl_checkpoint.h; 0 when there
// was none). A crawl's page requests (from a server's log) minus these are what it fetched after
// its last checkpoint: after a kill -9, what it may fetch again (docs/features/cluster.md,
// "Acknowledgement").
//
// Thread-safety: a test's; one thread.
#ifndef URLSIEVE_TESTS_CRAWLER_PAGES_AFTER_CHECKPOINT_H_
#define URLSIEVE_TESTS_CRAWLER_PAGES_AFTER_CHECKPOINT_H_

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "base/sqlite_db.h"
#include "crawler/state/crawl_checkpoint.h"

namespace urlsieve::testing {

// The counters are read read-only: the crawl may still be running (WAL readers do not block it).
inline Result<uint64_t> ReadCheckpointedPages(const std::filesystem::path& out) {
  SqliteDb::Options options;
  options.create_if_missing = false;
  options.read_only = true;
  auto db = SqliteDb::Open((out / "state" / "state.db").string(), options);
  if (!db.ok()) return db.status();
  Result<CrawlStatsSnapshot> counters = ReadCrawlCounters(**db);
  if (!counters.ok() && counters.status().code() == StatusCode::kNotFound) return uint64_t{0};
  if (!counters.ok()) return counters.status();
  return counters->pages;
}

// Blocks until the running crawl of `out` has checkpointed at least one page (true), or until
// `running()` is false or 60 s have passed (false).
inline bool WaitForCheckpointedPages(const std::filesystem::path& out,
                                     const std::function<bool()>& running) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (running() && std::chrono::steady_clock::now() < deadline) {
    Result<uint64_t> pages = ReadCheckpointedPages(out);
    if (pages.ok() && *pages > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling the state's counters
  }
  return false;
}

inline uint64_t CheckpointedPages(const std::filesystem::path& out) {
  Result<uint64_t> pages = ReadCheckpointedPages(out);
  EXPECT_TRUE(pages.ok()) << out << ": " << pages.status().ToString();
  return pages.ok() ? *pages : 0;
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_PAGES_AFTER_CHECKPOINT_H_
