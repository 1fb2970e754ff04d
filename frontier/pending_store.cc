#include "frontier/pending_store.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

namespace urlsieve {
namespace {

// Whether frontier_pending has the column `name` (parent, kind): databases written before it
// existed do not.
Result<bool> HasColumn(SqliteDb& db, const std::string& name) {
  Result<SqliteStatement> stmt = db.Prepare(
      "SELECT count(*) FROM pragma_table_info('frontier_pending') WHERE name='" + name + "'");
  if (!stmt.ok()) return stmt.status();
  Result<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  return *row && stmt->ColumnInt64(0) > 0;
}

}  // namespace

Status PendingStore::Checkpoint(SqliteDb& db, const std::function<PendingDelta()>& take_delta) {
  URLSIEVE_RETURN_IF_ERROR(db.Exec(
      "CREATE TABLE IF NOT EXISTS frontier_pending(id INTEGER PRIMARY KEY, url TEXT NOT NULL,"
      " depth INTEGER NOT NULL, parent TEXT, kind INTEGER NOT NULL DEFAULT 0);"
      "CREATE TABLE IF NOT EXISTS frontier_meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL)"));
  Result<bool> has_parent = HasColumn(db, "parent");
  if (!has_parent.ok()) return has_parent.status();
  if (!*has_parent) {
    URLSIEVE_RETURN_IF_ERROR(db.Exec("ALTER TABLE frontier_pending ADD COLUMN parent TEXT"));
  }
  Result<bool> has_kind = HasColumn(db, "kind");
  if (!has_kind.ok()) return has_kind.status();
  if (!*has_kind) {
    URLSIEVE_RETURN_IF_ERROR(
        db.Exec("ALTER TABLE frontier_pending ADD COLUMN kind INTEGER NOT NULL DEFAULT 0"));
  }
  Result<SqliteStatement> read_seq =
      db.Prepare("SELECT value FROM frontier_meta WHERE name='checkpoint_seq'");
  if (!read_seq.ok()) return read_seq.status();
  Result<bool> has_seq = read_seq->Step();
  if (!has_seq.ok()) return has_seq.status();
  const uint64_t db_seq = *has_seq ? static_cast<uint64_t>(read_seq->ColumnInt64(0)) : 0;
  read_seq->Reset();

  PendingDelta delta = take_delta();
  if (used_ && db_seq == checkpoint_seq_) {
    unconfirmed_inserts_.clear();  // the previous checkpoint was committed
    unconfirmed_deletes_.clear();
    replace_pending_set_ = false;
  }
  // Whatever is still unconfirmed was rolled back: write it again, before the new changes.
  unconfirmed_inserts_.insert(unconfirmed_inserts_.end(),
                              std::make_move_iterator(delta.inserts.begin()),
                              std::make_move_iterator(delta.inserts.end()));
  unconfirmed_deletes_.insert(unconfirmed_deletes_.end(), delta.deletes.begin(),
                              delta.deletes.end());
  if (replace_pending_set_) {
    // A fresh crawl: whatever an earlier crawl left in this database is not ours.
    URLSIEVE_RETURN_IF_ERROR(db.Exec("DELETE FROM frontier_pending"));
  }

  Result<SqliteStatement> insert = db.Prepare(
      "INSERT OR REPLACE INTO frontier_pending(id, url, depth, parent, kind) "
      "VALUES(?,?,?,?,?)");
  if (!insert.ok()) return insert.status();
  for (const PendingRow& row : unconfirmed_inserts_) {
    URLSIEVE_RETURN_IF_ERROR(insert->BindInt64(1, static_cast<int64_t>(row.id)));
    URLSIEVE_RETURN_IF_ERROR(insert->BindText(2, row.url, true));
    URLSIEVE_RETURN_IF_ERROR(insert->BindInt64(3, row.depth));
    URLSIEVE_RETURN_IF_ERROR(row.parent.empty() ? insert->BindNull(4)
                                                : insert->BindText(4, row.parent, true));
    URLSIEVE_RETURN_IF_ERROR(insert->BindInt64(5, static_cast<int64_t>(row.kind)));
    URLSIEVE_RETURN_IF_ERROR(insert->Run());
  }
  Result<SqliteStatement> erase = db.Prepare("DELETE FROM frontier_pending WHERE id=?");
  if (!erase.ok()) return erase.status();
  for (uint64_t id : unconfirmed_deletes_) {
    URLSIEVE_RETURN_IF_ERROR(erase->BindInt64(1, static_cast<int64_t>(id)));
    URLSIEVE_RETURN_IF_ERROR(erase->Run());
  }
  checkpoint_seq_ = db_seq + 1;
  used_ = true;
  Result<SqliteStatement> meta =
      db.Prepare("INSERT OR REPLACE INTO frontier_meta(name, value) VALUES(?,?)");
  if (!meta.ok()) return meta.status();
  for (const auto& [name, value] :
       {std::pair<const char*, uint64_t>{"checkpoint_seq", checkpoint_seq_},
        {"next_id", delta.next_id}}) {
    URLSIEVE_RETURN_IF_ERROR(meta->BindText(1, name));
    URLSIEVE_RETURN_IF_ERROR(meta->BindInt64(2, static_cast<int64_t>(value)));
    URLSIEVE_RETURN_IF_ERROR(meta->Run());
  }
  return Status::Ok();
}

Result<uint64_t> PendingStore::Load(SqliteDb& db, const RowVisitor& row) {
  Result<SqliteStatement> has_table = db.Prepare(
      "SELECT count(*) FROM sqlite_schema WHERE name IN ('frontier_pending', 'frontier_meta')");
  if (!has_table.ok()) return has_table.status();
  Result<bool> counted = has_table->Step();
  if (!counted.ok()) return counted.status();
  if (has_table->ColumnInt64(0) != 2) {
    used_ = true;  // nothing to restore: an empty pending set
    replace_pending_set_ = false;
    return uint64_t{0};
  }
  uint64_t next_id = 0;
  Result<SqliteStatement> meta = db.Prepare("SELECT name, value FROM frontier_meta");
  if (!meta.ok()) return meta.status();
  for (;;) {
    Result<bool> more = meta->Step();
    if (!more.ok()) return more.status();
    if (!*more) break;
    const auto value = static_cast<uint64_t>(meta->ColumnInt64(1));
    if (meta->ColumnText(0) == "checkpoint_seq") checkpoint_seq_ = value;
    if (meta->ColumnText(0) == "next_id") next_id = std::max(next_id, value);
  }
  Result<bool> has_parent = HasColumn(db, "parent");
  if (!has_parent.ok()) return has_parent.status();
  Result<bool> has_kind = HasColumn(db, "kind");
  if (!has_kind.ok()) return has_kind.status();
  std::string select = "SELECT id, url, depth, ";
  select += *has_parent ? "parent" : "NULL";
  select += ", ";
  select += *has_kind ? "kind" : "0";
  select += " FROM frontier_pending ORDER BY id";
  Result<SqliteStatement> rows = db.Prepare(select);
  if (!rows.ok()) return rows.status();
  for (;;) {
    Result<bool> more = rows->Step();
    if (!more.ok()) return more.status();
    if (!*more) break;
    const int64_t depth = rows->ColumnInt64(2);
    if (depth < 0 || depth > UINT32_MAX) return Status::Corruption("frontier_pending: bad depth");
    const int64_t kind = rows->ColumnInt64(4);
    if (kind != static_cast<int64_t>(PendingKind::kPage) &&
        kind != static_cast<int64_t>(PendingKind::kSitemap)) {
      return Status::Corruption("frontier_pending: bad kind " + std::to_string(kind));
    }
    row(static_cast<uint64_t>(rows->ColumnInt64(0)), rows->ColumnText(1),
        static_cast<uint32_t>(depth), rows->ColumnText(3), static_cast<PendingKind>(kind));
  }
  used_ = true;
  replace_pending_set_ = false;
  return next_id;
}

}  // namespace urlsieve
