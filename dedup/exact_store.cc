#include "dedup/exact_store.h"

#include <algorithm>

namespace urlsieve {

Result<std::unique_ptr<ExactStore>> ExactStore::Open(SqliteDb* db) {
  // Rows are appended in arrival order (rowid), so recording a new key writes the table's last
  // page; only the small (hash, rowid) index takes random inserts. Keying the table itself by
  // (hash, url) made every insert dirty a random page of the whole table: measured 5-8x slower
  // once the table outgrew the page cache.
  URLSIEVE_RETURN_IF_ERROR(
      db->Exec("CREATE TABLE IF NOT EXISTS seen_urls(id INTEGER PRIMARY KEY, hash INTEGER NOT "
               "NULL, url TEXT NOT NULL);"
               "CREATE INDEX IF NOT EXISTS seen_urls_hash ON seen_urls(hash)"));
  auto insert = db->Prepare("INSERT INTO seen_urls(hash, url) VALUES(?, ?)");
  if (!insert.ok()) return insert.status();
  auto lookup = db->Prepare("SELECT url FROM seen_urls WHERE hash = ?");
  if (!lookup.ok()) return lookup.status();
  return std::unique_ptr<ExactStore>(new ExactStore(db, std::move(*insert), std::move(*lookup)));
}

Result<bool> ExactStore::Lookup(int64_t hash, std::string_view key) {
  URLSIEVE_RETURN_IF_ERROR(lookup_.BindInt64(1, hash));
  // Several rows share a hash only after a 64-bit collision; the URL comparison decides.
  for (;;) {
    Result<bool> row = lookup_.Step();
    if (!row.ok() || !*row) {
      lookup_.Reset();
      return row;
    }
    if (lookup_.ColumnText(0) == key) {
      lookup_.Reset();
      return true;
    }
  }
}

Status ExactStore::InsertIfAbsent(std::span<const Entry> entries, std::vector<uint8_t>* inserted) {
  inserted->assign(entries.size(), 0);
  order_.clear();
  order_.reserve(entries.size());
  for (uint32_t i = 0; i < entries.size(); ++i) {
    order_.emplace_back(static_cast<int64_t>(entries[i].hash), i);
  }
  // Signed order is SQLite's integer order, so the index is walked left to right. The position
  // breaks ties: the first occurrence of a key repeated in the batch is inserted (reported new),
  // and the later ones find it.
  std::sort(order_.begin(), order_.end());
  bool first = true;
  int64_t previous = 0;
  for (const auto& [hash, i] : order_) {
    const Entry& e = entries[i];
    // After an entry with the same hash, the hint no longer holds: that entry may have just been
    // inserted.
    const bool probe = e.maybe_present || (!first && hash == previous);
    first = false;
    previous = hash;
    if (probe) {
      Result<bool> found = Lookup(hash, e.key);
      if (!found.ok()) return found.status();
      if (*found) continue;
    }
    URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(1, hash));
    URLSIEVE_RETURN_IF_ERROR(insert_.BindText(2, e.key, /*static_until_reset=*/true));
    URLSIEVE_RETURN_IF_ERROR(insert_.Run());
    (*inserted)[i] = 1;
  }
  return Status::Ok();
}

Result<bool> ExactStore::Contains(uint64_t hash, std::string_view key) {
  return Lookup(static_cast<int64_t>(hash), key);
}

Status ExactStore::ForEachKey(const std::function<void(std::string_view key)>& fn) {
  auto scan = db_->Prepare("SELECT url FROM seen_urls");
  if (!scan.ok()) return scan.status();
  for (;;) {
    Result<bool> row = scan->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    fn(scan->ColumnText(0));
  }
}

Result<uint64_t> ExactStore::CountRows() {
  auto count = db_->Prepare("SELECT count(*) FROM seen_urls");
  if (!count.ok()) return count.status();
  Result<bool> row = count->Step();
  if (!row.ok()) return row.status();
  return static_cast<uint64_t>(count->ColumnInt64(0));
}

}  // namespace urlsieve
