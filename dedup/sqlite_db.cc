#include "dedup/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

namespace urlsieve {
namespace {

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string msg(what);
  msg += ": ";
  msg += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) return Status::Corruption(msg);
  if (primary == SQLITE_MISUSE || primary == SQLITE_RANGE || primary == SQLITE_ERROR) {
    return Status::FailedPrecondition(msg);
  }
  return Status::IoError(msg);
}

}  // namespace

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), stmt_(std::exchange(other.stmt_, nullptr)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

Status SqliteStatement::Error(int rc, std::string_view what) const {
  return SqliteError(db_, rc, what);
}

Status SqliteStatement::BindInt64(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  return rc == SQLITE_OK ? Status::Ok() : Error(rc, "bind");
}

Status SqliteStatement::BindText(int index, std::string_view text, bool static_until_reset) {
  const int rc =
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(),
                          static_until_reset ? SQLITE_STATIC : SQLITE_TRANSIENT, SQLITE_UTF8);
  return rc == SQLITE_OK ? Status::Ok() : Error(rc, "bind");
}

Status SqliteStatement::BindBlob(int index, const void* data, size_t size,
                                 bool static_until_reset) {
  const int rc = sqlite3_bind_blob64(stmt_, index, data, size,
                                     static_until_reset ? SQLITE_STATIC : SQLITE_TRANSIENT);
  return rc == SQLITE_OK ? Status::Ok() : Error(rc, "bind");
}

Status SqliteStatement::BindNull(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  return rc == SQLITE_OK ? Status::Ok() : Error(rc, "bind");
}

Result<bool> SqliteStatement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Error(rc, "step");
}

Status SqliteStatement::Run() {
  Result<bool> row = Step();
  while (row.ok() && *row) row = Step();
  Reset();
  return row.ok() ? Status::Ok() : row.status();
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t SqliteStatement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double SqliteStatement::ColumnDouble(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string_view SqliteStatement::ColumnText(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (text == nullptr) return {};
  return {text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

std::string_view SqliteStatement::ColumnBlob(int column) const {
  const auto* blob = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  if (blob == nullptr) return {};
  return {blob, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

bool SqliteStatement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, const Options& options) {
  int flags = options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (options.create_if_missing && !options.read_only) flags |= SQLITE_OPEN_CREATE;
  // Each SqliteDb is used by one thread at a time (see header), so SQLite's own mutexes are
  // redundant: NOMUTEX saves a lock per call.
  flags |= SQLITE_OPEN_NOMUTEX;
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteError(raw, rc, "open " + path);
    sqlite3_close_v2(raw);
    return status;
  }
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, path));
  sqlite3_busy_timeout(raw, options.busy_timeout_ms);
  sqlite3_extended_result_codes(raw, 1);
  // Touch the schema so that a file that is not a database fails now, with a clear error.
  URLSIEVE_RETURN_IF_ERROR(db->Exec("SELECT count(*) FROM sqlite_schema"));
  if (options.wal && !options.read_only) {
    URLSIEVE_RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL"));
  }
  return db;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

Status SqliteDb::Exec(std::string_view sql) {
  std::string owned(sql);
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string what = "exec '" + owned.substr(0, 60) + "'";
  sqlite3_free(err);
  return SqliteError(db_, rc, what);
}

Result<SqliteStatement> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK)
    return SqliteError(db_, rc, "prepare '" + std::string(sql.substr(0, 60)) + "'");
  return SqliteStatement(db_, stmt);
}

int64_t SqliteDb::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int SqliteDb::Changes() const { return sqlite3_changes(db_); }

}  // namespace urlsieve
