// SqliteDb and SqliteStatement: a thin RAII layer over the SQLite C API that reports errors as
// Status values. Shared by the exact seen-store (dedup/) and the durable frontier (frontier/),
// which keep their tables in one database file so one transaction checkpoints both.
//
// Errors name the database file and what was being done, e.g. "/x/state/state.db: committing a
// checkpoint: database or disk is full"; callers need not (and should not) add the path again.
//
// Thread-safety: none. A SqliteDb and its statements belong to one thread at a time; owners that
// are shared between threads guard them with their own mutex.
#ifndef URLSIEVE_BASE_SQLITE_DB_H_
#define URLSIEVE_BASE_SQLITE_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace urlsieve {

class SqliteStatement {
 public:
  SqliteStatement() = default;
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // Parameters are 1-based, as in SQLite. Text and blobs are copied (SQLITE_TRANSIENT) unless
  // `static_until_reset` promises they outlive the next Reset().
  Status BindInt64(int index, int64_t value);
  Status BindText(int index, std::string_view text, bool static_until_reset = false);
  Status BindBlob(int index, const void* data, size_t size, bool static_until_reset = false);
  Status BindNull(int index);

  // Advances; yields true when a row is available, false when the statement is done.
  Result<bool> Step();
  // Runs a statement that returns no rows to completion.
  Status Run();
  // Makes the statement ready to run again, keeping nothing bound.
  void Reset();

  int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  std::string_view ColumnText(int column) const;  // valid until the next Step/Reset
  std::string_view ColumnBlob(int column) const;  // valid until the next Step/Reset
  bool ColumnIsNull(int column) const;

  sqlite3_stmt* raw() const { return stmt_; }

 private:
  friend class SqliteDb;
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt, const std::string* path)
      : db_(db), stmt_(stmt), path_(path) {}
  // "<path>: <what> '<the statement's SQL>': <SQLite's message>".
  Status Error(int rc, std::string_view what) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  const std::string* path_ = nullptr;  // the owning SqliteDb's, which outlives its statements
};

class SqliteDb {
 public:
  struct Options {
    bool create_if_missing = true;
    bool read_only = false;
    // WAL + synchronous=NORMAL: durable at each checkpoint of the WAL, fast batched commits.
    bool wal = true;
    int busy_timeout_ms = 5000;
    // With read_only: the caller guarantees that no other process writes the database meanwhile
    // (it holds a lock that excludes writers). When no WAL holds data, the file is then opened
    // with SQLite's `immutable` flag, so that not even the -wal/-shm files are created: the open
    // writes nothing and works in a read-only directory.
    bool no_other_writer = false;
    // Checks on open that the file is as long as its header says (page_count * page_size), when
    // no WAL holds data: a truncated database is Corruption here, not wrong answers later.
    // Off only for scratch databases that are rebuilt anyway (the frontier's spill).
    bool verify_size = true;
  };

  // Opens (or creates) the database at `path` and checks that it is a readable SQLite file of the
  // right size, so a corrupt, truncated or foreign file is reported here rather than on first use.
  // The size check is O(1) (two stat calls, 100 bytes read); a full `PRAGMA quick_check` would
  // read the whole file, which can be gigabytes for an exact store, so it is not done here.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, const Options& options);
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path) {
    return Open(path, Options());
  }
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more SQL statements that return no rows. `doing` says what for, in errors
  // ("committing a checkpoint"); by default they quote the SQL.
  Status Exec(std::string_view sql, std::string_view doing = {});
  Result<SqliteStatement> Prepare(std::string_view sql);

  Status Begin(std::string_view doing = "starting a transaction") {
    return Exec("BEGIN IMMEDIATE", doing);
  }
  Status Commit(std::string_view doing = "committing") { return Exec("COMMIT", doing); }
  Status Rollback() { return Exec("ROLLBACK", "rolling back"); }

  int64_t LastInsertRowId() const;
  int Changes() const;
  const std::string& path() const { return path_; }
  sqlite3* raw() const { return db_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_BASE_SQLITE_DB_H_
