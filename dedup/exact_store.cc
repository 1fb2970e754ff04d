#include "dedup/exact_store.h"

#include <algorithm>

namespace urlsieve {

Result<std::unique_ptr<ExactStore>> ExactStore::Open(SqliteDb* db) {
  URLSIEVE_RETURN_IF_ERROR(
      db->Exec("CREATE TABLE IF NOT EXISTS seen_urls(hash INTEGER NOT NULL, url TEXT NOT NULL, "
               "PRIMARY KEY(hash, url)) WITHOUT ROWID"));
  // INSERT OR IGNORE is the lookup and the insert in one probe: a conflict on (hash, url) means the
  // full URL is already stored.
  auto insert = db->Prepare("INSERT OR IGNORE INTO seen_urls(hash, url) VALUES(?, ?)");
  if (!insert.ok()) return insert.status();
  auto lookup = db->Prepare("SELECT 1 FROM seen_urls WHERE hash = ? AND url = ?");
  if (!lookup.ok()) return lookup.status();
  return std::unique_ptr<ExactStore>(new ExactStore(db, std::move(*insert), std::move(*lookup)));
}

Status ExactStore::InsertIfAbsent(std::span<const Entry> entries, std::vector<uint8_t>* inserted) {
  inserted->assign(entries.size(), 0);
  order_.clear();
  order_.reserve(entries.size());
  for (uint32_t i = 0; i < entries.size(); ++i) {
    order_.emplace_back(static_cast<int64_t>(entries[i].hash), i);
  }
  // Signed order is SQLite's integer order; the position breaks ties so that the first occurrence
  // of a key repeated in the batch is the one that is inserted (and reported new).
  std::sort(order_.begin(), order_.end());
  for (const auto& [hash, i] : order_) {
    URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(1, hash));
    URLSIEVE_RETURN_IF_ERROR(insert_.BindText(2, entries[i].key, /*static_until_reset=*/true));
    Status status = insert_.Run();
    if (!status.ok()) return status;
    (*inserted)[i] = db_->Changes() > 0 ? 1 : 0;
  }
  return Status::Ok();
}

Result<bool> ExactStore::Contains(uint64_t hash, std::string_view key) {
  URLSIEVE_RETURN_IF_ERROR(lookup_.BindInt64(1, static_cast<int64_t>(hash)));
  URLSIEVE_RETURN_IF_ERROR(lookup_.BindText(2, key, /*static_until_reset=*/true));
  Result<bool> row = lookup_.Step();
  lookup_.Reset();
  return row;
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
