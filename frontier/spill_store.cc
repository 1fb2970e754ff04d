#include "frontier/spill_store.h"

namespace urlsieve {

Result<std::unique_ptr<SpillStore>> SpillStore::Open(const std::string& path) {
  SqliteDb::Options options;
  options.wal = false;
  options.verify_size = false;  // a cache without a journal, emptied below
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path, options);
  if (!db.ok()) return db.status();
  std::unique_ptr<SpillStore> store(new SpillStore(std::move(*db)));
  // No journal and no fsync: the spill is a cache, rebuilt from the checkpoint after a crash.
  // Exclusive locking saves a file lock per statement.
  URLSIEVE_RETURN_IF_ERROR(store->db_->Exec(
      "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
      "PRAGMA cache_size=-8192;"
      "DROP TABLE IF EXISTS spill;"
      "CREATE TABLE spill(key INTEGER NOT NULL, seq INTEGER NOT NULL, id INTEGER NOT NULL,"
      " origin INTEGER NOT NULL, depth INTEGER NOT NULL, retries INTEGER NOT NULL,"
      " parent INTEGER NOT NULL, rest BLOB NOT NULL, sitemap INTEGER NOT NULL,"
      " PRIMARY KEY(key, seq)) WITHOUT ROWID"));
  // One long transaction: a commit per URL would cost a write() per page touched. With no
  // journal, SQLite writes dirty pages back as its cache fills; Sync() commits now and then.
  URLSIEVE_RETURN_IF_ERROR(store->db_->Exec("BEGIN"));
  Result<SqliteStatement> insert = store->db_->Prepare(
      "INSERT INTO spill(key, seq, id, origin, depth, retries, parent, rest, sitemap) "
      "VALUES(?,?,?,?,?,?,?,?,?)");
  if (!insert.ok()) return insert.status();
  store->insert_ = std::move(*insert);
  Result<SqliteStatement> select = store->db_->Prepare(
      "SELECT id, origin, depth, retries, parent, rest, sitemap FROM spill WHERE key=? AND seq>=? "
      "AND seq<? "
      "ORDER BY seq");
  if (!select.ok()) return select.status();
  store->select_ = std::move(*select);
  Result<SqliteStatement> erase =
      store->db_->Prepare("DELETE FROM spill WHERE key=? AND seq>=? AND seq<?");
  if (!erase.ok()) return erase.status();
  store->erase_ = std::move(*erase);
  return store;
}

Status SpillStore::Append(uint32_t key, uint64_t seq, const QueuedUrl& url) {
  URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(1, key));
  URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(2, static_cast<int64_t>(seq)));
  URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(3, static_cast<int64_t>(url.id)));
  URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(4, url.origin));
  URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(5, url.depth));
  URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(6, url.retries));
  URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(7, url.parent));
  URLSIEVE_RETURN_IF_ERROR(insert_.BindBlob(8, url.rest.data(), url.rest.size(), true));
  URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(9, url.sitemap ? 1 : 0));
  URLSIEVE_RETURN_IF_ERROR(insert_.Run());
  return MaybeCommit();
}

Status SpillStore::MaybeCommit() {
  // Bounds what a commit has to write; nothing depends on the spill being committed.
  if (++writes_since_commit_ < (1u << 16)) return Status::Ok();
  writes_since_commit_ = 0;
  return db_->Exec("COMMIT; BEGIN");
}

Status SpillStore::Load(uint32_t key, uint64_t from, uint64_t count, UrlQueue* queue) {
  for (SqliteStatement* stmt : {&select_, &erase_}) {
    URLSIEVE_RETURN_IF_ERROR(stmt->BindInt64(1, key));
    URLSIEVE_RETURN_IF_ERROR(stmt->BindInt64(2, static_cast<int64_t>(from)));
    URLSIEVE_RETURN_IF_ERROR(stmt->BindInt64(3, static_cast<int64_t>(from + count)));
  }
  uint64_t loaded = 0;
  for (;;) {
    Result<bool> row = select_.Step();
    if (!row.ok()) {
      select_.Reset();
      return row.status();
    }
    if (!*row) break;
    QueuedUrl url;
    url.id = static_cast<uint64_t>(select_.ColumnInt64(0));
    url.origin = static_cast<uint32_t>(select_.ColumnInt64(1));
    url.depth = static_cast<uint32_t>(select_.ColumnInt64(2));
    url.retries = static_cast<uint32_t>(select_.ColumnInt64(3));
    url.parent = static_cast<uint32_t>(select_.ColumnInt64(4));
    url.rest = select_.ColumnBlob(5);
    url.sitemap = select_.ColumnInt64(6) != 0;
    queue->Push(url);
    ++loaded;
  }
  select_.Reset();
  if (loaded != count) {
    return Status::Corruption("spill file lost URLs: expected " + std::to_string(count) +
                              ", found " + std::to_string(loaded));
  }
  URLSIEVE_RETURN_IF_ERROR(erase_.Run());
  return MaybeCommit();
}

int64_t SpillStore::FileBytes() {
  Result<SqliteStatement> stmt = db_->Prepare(
      "SELECT page_size * (page_count - freelist_count) FROM pragma_page_count, "
      "pragma_page_size, pragma_freelist_count");
  if (!stmt.ok()) return -1;
  Result<bool> row = stmt->Step();
  return row.ok() && *row ? stmt->ColumnInt64(0) : -1;
}

}  // namespace urlsieve
