#include "base/sqlite_db.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <utility>

#include "base/sqlite_process.h"

namespace urlsieve {
namespace {

// `what` already names the file and the operation.
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

// At most 60 bytes of SQL, for a message.
std::string Excerpt(std::string_view sql) {
  return std::string(sql.substr(0, 60)) + (sql.size() > 60 ? "..." : "");
}

// The size of a file, or -1 when there is none.
int64_t FileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int64_t>(st.st_size);
}

// "file:<path>?immutable=1", the path percent-encoded as an SQLite URI requires.
std::string ImmutableUri(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : path) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '/' || c == '-' || c == '_' || c == '.' || c == '~';
    if (plain) {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri + "?immutable=1";
}

// With no WAL data, every page of the database lives in the file, and the header says how many
// there are (https://www.sqlite.org/fileformat2.html#database_header: page size at offset 16, the
// "in-header database size" at 28, valid when the change counter at 24 equals the
// version-valid-for number at 92). A file cut short, even by one byte, is shorter than that. (With
// WAL data the file may legitimately lag behind.) A file that is not SQLite is left to SQLite.
Status VerifySize(const std::string& path, int64_t file_size) {
  unsigned char h[100];
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::Ok();  // SQLite's open reports it
  const size_t got = std::fread(h, 1, sizeof(h), f);
  std::fclose(f);
  if (got < sizeof(h) || std::memcmp(h, "SQLite format 3", 16) != 0) return Status::Ok();
  auto be32 = [&](int at) {
    return uint32_t{h[at]} << 24 | uint32_t{h[at + 1]} << 16 | uint32_t{h[at + 2]} << 8 |
           uint32_t{h[at + 3]};
  };
  const int64_t page_size = h[16] == 0 && h[17] == 1 ? 65536 : (h[16] << 8 | h[17]);
  const int64_t page_count = be32(28);
  if (page_size < 512 || be32(24) != be32(92) || page_count == 0) return Status::Ok();
  if (file_size % page_size != 0 || file_size < page_count * page_size) {
    return Status::Corruption(
        path + ": truncated or damaged database: the file has " + std::to_string(file_size) +
        " bytes, its header says " + std::to_string(page_count) + " pages of " +
        std::to_string(page_size) + " bytes (" + std::to_string(page_count * page_size) +
        "); restore it from a backup");
  }
  return Status::Ok();
}

}  // namespace

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      path_(std::exchange(other.path_, nullptr)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    path_ = std::exchange(other.path_, nullptr);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

Status SqliteStatement::Error(int rc, std::string_view what) const {
  std::string msg = path_ != nullptr ? *path_ + ": " : std::string();
  msg += what;
  if (const char* sql = sqlite3_sql(stmt_); sql != nullptr) msg += " '" + Excerpt(sql) + "'";
  return SqliteError(db_, rc, msg);
}

Status SqliteStatement::BindInt64(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  return rc == SQLITE_OK ? Status::Ok() : Error(rc, "binding a parameter of");
}

Status SqliteStatement::BindText(int index, std::string_view text, bool static_until_reset) {
  const int rc =
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(),
                          static_until_reset ? SQLITE_STATIC : SQLITE_TRANSIENT, SQLITE_UTF8);
  return rc == SQLITE_OK ? Status::Ok() : Error(rc, "binding a parameter of");
}

Status SqliteStatement::BindBlob(int index, const void* data, size_t size,
                                 bool static_until_reset) {
  const int rc = sqlite3_bind_blob64(stmt_, index, data, size,
                                     static_until_reset ? SQLITE_STATIC : SQLITE_TRANSIENT);
  return rc == SQLITE_OK ? Status::Ok() : Error(rc, "binding a parameter of");
}

Status SqliteStatement::BindNull(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  return rc == SQLITE_OK ? Status::Ok() : Error(rc, "binding a parameter of");
}

Result<bool> SqliteStatement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Error(rc, "running");
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
  // Sizes before SQLite touches anything: opening a WAL database creates an empty -wal file.
  const int64_t file_size = FileSize(path);
  const int64_t wal_size = FileSize(path + "-wal");
  const bool wal_has_data = wal_size > 0;
  int flags = options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (options.create_if_missing && !options.read_only) flags |= SQLITE_OPEN_CREATE;
  // Each SqliteDb is used by one thread at a time (see header), so SQLite's own mutexes are
  // redundant: NOMUTEX saves a lock per call.
  flags |= SQLITE_OPEN_NOMUTEX;
  if (options.verify_size && file_size > 0 && !wal_has_data) {
    URLSIEVE_RETURN_IF_ERROR(VerifySize(path, file_size));
  }
  std::string name = path;
  if (options.read_only && options.no_other_writer && !wal_has_data && file_size >= 0) {
    name = ImmutableUri(path);
    flags |= SQLITE_OPEN_URI;
  }
  ConfigureSqliteForProcess();
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteError(raw, rc, path + ": opening");
    sqlite3_close_v2(raw);
    return status;
  }
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, path));
  sqlite3_busy_timeout(raw, options.busy_timeout_ms);
  sqlite3_extended_result_codes(raw, 1);
  // Touch the schema so that a file that is not a database fails now, with a clear error.
  URLSIEVE_RETURN_IF_ERROR(db->Exec("SELECT count(*) FROM sqlite_schema", "reading the schema"));
  if (options.wal && !options.read_only) {
    URLSIEVE_RETURN_IF_ERROR(
        db->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", "switching to WAL mode"));
  }
  return db;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

Status SqliteDb::Exec(std::string_view sql, std::string_view doing) {
  std::string owned(sql);
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  sqlite3_free(err);
  std::string what = path_ + ": ";
  what += doing.empty() ? "running '" + Excerpt(sql) + "'" : std::string(doing);
  return SqliteError(db_, rc, what);
}

Result<SqliteStatement> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, path_ + ": preparing '" + Excerpt(sql) + "'");
  return SqliteStatement(db_, stmt, &path_);
}

int64_t SqliteDb::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int SqliteDb::Changes() const { return sqlite3_changes(db_); }

}  // namespace urlsieve
