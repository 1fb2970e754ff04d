// SqliteDb and SqliteStatement: a thin RAII layer over the SQLite C API that reports errors as
// Status values. Shared by the exact seen-store (dedup/) and the durable frontier (frontier/),
// which keep their tables in one database file so one transaction checkpoints both.
//
// Thread-safety: none. A SqliteDb and its statements belong to one thread at a time; owners that
// are shared between threads guard them with their own mutex.
#ifndef URLSIEVE_DEDUP_SQLITE_DB_H_
#define URLSIEVE_DEDUP_SQLITE_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "dedup/status.h"

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
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Status Error(int rc, std::string_view what) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDb {
 public:
  struct Options {
    bool create_if_missing = true;
    bool read_only = false;
    // WAL + synchronous=NORMAL: durable at each checkpoint of the WAL, fast batched commits.
    bool wal = true;
    int busy_timeout_ms = 5000;
  };

  // Opens (or creates) the database at `path` and checks that it is a readable SQLite file, so a
  // corrupt or foreign file is reported here rather than on first use.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, const Options& options);
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path) {
    return Open(path, Options());
  }
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more SQL statements that return no rows.
  Status Exec(std::string_view sql);
  Result<SqliteStatement> Prepare(std::string_view sql);

  Status Begin() { return Exec("BEGIN IMMEDIATE"); }
  Status Commit() { return Exec("COMMIT"); }
  Status Rollback() { return Exec("ROLLBACK"); }

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

#endif  // URLSIEVE_DEDUP_SQLITE_DB_H_
