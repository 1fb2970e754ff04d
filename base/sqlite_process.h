// SqliteProcessConfig: how SQLite is configured for the whole process (sqlite3_config), decided
// once, before urlsieve's first connection (docs/features/exact-store.md, "SQLite in your
// process").
//
// Why: SQLite's memory statistics (SQLITE_CONFIG_MEMSTATUS, on in Debian's build) take one
// process-wide mutex on every allocation and free. Each exact-store shard is its own file and
// connection, so threads working on different shards share nothing else; with the statistics on,
// two threads inserting ran at 0.90x one (bench/bench_exact_store.cc). urlsieve turns them off.
//
// sqlite3_config only works before SQLite is initialized (by sqlite3_initialize or the first
// open). An application that embeds urlsieve and initialized SQLite first keeps its own
// configuration: urlsieve detects that (sqlite3_config answers SQLITE_MISUSE) and changes nothing.
// One that calls sqlite3_config itself but opens nothing before urlsieve's first open has its
// memory-statistics setting replaced; to keep it, call sqlite3_initialize() first.
//
// Thread-safety: ConfigureSqliteForProcess may be called from any thread, any number of times;
// the first call decides (std::call_once) and every call returns its answer.
#ifndef URLSIEVE_BASE_SQLITE_PROCESS_H_
#define URLSIEVE_BASE_SQLITE_PROCESS_H_

namespace urlsieve {

enum class SqliteProcessConfig {
  kMemoryStatisticsOff,  // urlsieve configured SQLite: no global allocation mutex
  kKeptTheApplications,  // SQLite was initialized before: its configuration was left alone
};

// Called by SqliteDb::Open before every open; the first call configures SQLite.
SqliteProcessConfig ConfigureSqliteForProcess();

}  // namespace urlsieve

#endif  // URLSIEVE_BASE_SQLITE_PROCESS_H_
