#include "bench/support_exact_store_v1.h"

#include <algorithm>
#include <limits>
#include <string>

namespace urlsieve::bench {

Result<std::unique_ptr<ExactStoreV1>> ExactStoreV1::Open(
    SqliteDb* db, const std::function<void(std::string_view key)>& on_row) {
  URLSIEVE_RETURN_IF_ERROR(
      db->Exec("CREATE TABLE IF NOT EXISTS seen_urls(id INTEGER PRIMARY KEY, hash INTEGER NOT "
               "NULL, url TEXT NOT NULL)"));
  auto insert = db->Prepare("INSERT INTO seen_urls(hash, url) VALUES(?, ?)");
  if (!insert.ok()) return insert.status();
  auto fetch = db->Prepare("SELECT url FROM seen_urls WHERE id = ?");
  if (!fetch.ok()) return fetch.status();
  std::unique_ptr<ExactStoreV1> store(new ExactStoreV1(db, std::move(*insert), std::move(*fetch)));
  store->slots_.assign(1024, Slot{0, 0});

  auto scan = db->Prepare(on_row ? "SELECT id, hash, url FROM seen_urls"
                                 : "SELECT id, hash FROM seen_urls");
  if (!scan.ok()) return scan.status();
  for (;;) {
    Result<bool> row = scan->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    URLSIEVE_RETURN_IF_ERROR(
        store->AddToIndex(static_cast<uint64_t>(scan->ColumnInt64(1)), scan->ColumnInt64(0)));
    if (on_row) on_row(scan->ColumnText(2));
  }
  return store;
}

void ExactStoreV1::Place(Slot slot) {
  const size_t mask = slots_.size() - 1;
  size_t i = slot.tag & mask;
  while (slots_[i].id != 0) i = (i + 1) & mask;
  slots_[i] = slot;
}

Status ExactStoreV1::AddToIndex(uint64_t hash, int64_t id) {
  if (id <= 0 || id > std::numeric_limits<uint32_t>::max()) {
    return Status::Unsupported("exact store row id " + std::to_string(id) +
                               " is outside the index's 32-bit range");
  }
  if ((used_ + 1) * 4 > slots_.size() * 3) {
    std::vector<Slot> old(slots_.size() * 2, Slot{0, 0});
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.id != 0) Place(s);
    }
  }
  Place(Slot{Tag(hash), static_cast<uint32_t>(id)});
  ++used_;
  ++rows_;
  return Status::Ok();
}

Result<bool> ExactStoreV1::Lookup(uint64_t hash, std::string_view key) {
  const uint32_t tag = Tag(hash);
  const size_t mask = slots_.size() - 1;
  for (size_t i = tag & mask; slots_[i].id != 0; i = (i + 1) & mask) {
    if (slots_[i].tag != tag) continue;
    // A candidate: another key may share the tag (or the whole hash), so compare the URL.
    URLSIEVE_RETURN_IF_ERROR(fetch_.BindInt64(1, slots_[i].id));
    Result<bool> row = fetch_.Step();
    const bool same = row.ok() && *row && fetch_.ColumnText(0) == key;
    fetch_.Reset();
    if (!row.ok()) return row.status();
    if (same) return true;
  }
  return false;
}

Status ExactStoreV1::InsertIfAbsent(std::span<const Entry> entries, std::vector<uint8_t>* inserted) {
  inserted->assign(entries.size(), 0);
  order_.clear();
  order_.reserve(entries.size());
  for (uint32_t i = 0; i < entries.size(); ++i) {
    order_.emplace_back(static_cast<int64_t>(entries[i].hash), i);
  }
  // Hash order groups the occurrences of a key, and the position breaks ties: the first occurrence
  // of a key repeated in the batch is inserted (reported new) and the later ones find it. (Rows
  // are appended whatever the order; sorting only serves this grouping.)
  std::sort(order_.begin(), order_.end());
  bool first = true;
  int64_t previous = 0;
  for (const auto& [hash, i] : order_) {
    const Entry& e = entries[i];
    // After an entry with the same hash the caller's hint no longer holds: that entry may have
    // just been inserted.
    const bool probe = e.maybe_present || (!first && hash == previous);
    first = false;
    previous = hash;
    if (probe) {
      Result<bool> found = Lookup(e.hash, e.key);
      if (!found.ok()) return found.status();
      if (*found) continue;
    }
    URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(1, hash));
    URLSIEVE_RETURN_IF_ERROR(insert_.BindText(2, e.key, /*static_until_reset=*/true));
    URLSIEVE_RETURN_IF_ERROR(insert_.Run());
    URLSIEVE_RETURN_IF_ERROR(AddToIndex(e.hash, db_->LastInsertRowId()));
    (*inserted)[i] = 1;
  }
  return Status::Ok();
}

Result<bool> ExactStoreV1::Contains(uint64_t hash, std::string_view key) { return Lookup(hash, key); }

}  // namespace urlsieve::bench
