#include "base/sqlite_process.h"

#include <sqlite3.h>

#include <mutex>

namespace urlsieve {

SqliteProcessConfig ConfigureSqliteForProcess() {
  static std::once_flag once;
  static SqliteProcessConfig config = SqliteProcessConfig::kKeptTheApplications;
  std::call_once(once, [] {
    // SQLITE_MISUSE: SQLite is already initialized, so its configuration is the application's.
    if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK) {
      config = SqliteProcessConfig::kMemoryStatisticsOff;
    }
  });
  return config;
}

}  // namespace urlsieve
