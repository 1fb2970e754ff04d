#include "crawler/crawl_checkpoint.h"

namespace urlsieve {
namespace {

constexpr const char* kCreate =
    "CREATE TABLE IF NOT EXISTS crawl_outputs("
    " id INTEGER PRIMARY KEY CHECK (id = 1), pages INTEGER NOT NULL, rejected INTEGER NOT NULL,"
    " warc INTEGER NOT NULL)";

}  // namespace

Status WriteOutputSizes(SqliteDb& db, const OutputSizes& sizes) {
  URLSIEVE_RETURN_IF_ERROR(db.Exec(kCreate));
  Result<SqliteStatement> put = db.Prepare(
      "INSERT OR REPLACE INTO crawl_outputs(id, pages, rejected, warc) VALUES(1, ?, ?, ?)");
  if (!put.ok()) return put.status();
  URLSIEVE_RETURN_IF_ERROR(put->BindInt64(1, static_cast<int64_t>(sizes.pages)));
  URLSIEVE_RETURN_IF_ERROR(put->BindInt64(2, static_cast<int64_t>(sizes.rejected)));
  URLSIEVE_RETURN_IF_ERROR(put->BindInt64(3, static_cast<int64_t>(sizes.warc)));
  return put->Run();
}

Result<OutputSizes> ReadOutputSizes(SqliteDb& db) {
  URLSIEVE_RETURN_IF_ERROR(db.Exec(kCreate));
  Result<SqliteStatement> get = db.Prepare("SELECT pages, rejected, warc FROM crawl_outputs");
  if (!get.ok()) return get.status();
  Result<bool> row = get->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("the crawl state has no checkpoint of its outputs");
  OutputSizes sizes;
  sizes.pages = static_cast<uint64_t>(get->ColumnInt64(0));
  sizes.rejected = static_cast<uint64_t>(get->ColumnInt64(1));
  sizes.warc = static_cast<uint64_t>(get->ColumnInt64(2));
  return sizes;
}

}  // namespace urlsieve
