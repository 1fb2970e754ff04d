// ExactStoreV1: the exact store of format 1 (main at 5d01c04, dedup/exact_store.h then), kept
// verbatim for bench_exact_store only, so that one run measures v2 against v1. Not part of the
// library: a format-1 state is migrated (dedup/exact_store_migration.h).
//
// ExactStore: the exact, durable record of seen canonical URLs: one SQLite row per key, found
// through an in-memory hash index.
//
// Table `seen_urls(id INTEGER PRIMARY KEY, hash INTEGER NOT NULL, url TEXT NOT NULL)`, hash = the
// low 64 bits of the key's XXH3-128 (as a signed int64). Rows are appended in arrival order, so
// recording a key writes only the table's last page. The index maps hash -> row id in memory
// (open addressing, 8 bytes per slot: the hash's high 32 bits as a tag, which also picks the home
// slot so the table can grow without the rest of the hash, and a 32-bit row id); it is rebuilt
// from the table on open. A lookup is one index probe, then one read of the candidate row by id and
// a comparison of the full canonical URL, so answers are exact even when two keys share a hash.
//
// Why not an SQL index on hash (or a table keyed by (hash, url)): batches of random hashes dirty
// one index page per key, so every commit rewrote thousands of pages, and once the index outgrew
// the page cache each insert also read one. Measured, 1e7 new URLs in one transaction through
// SeenFilter: 74 s CPU with the SQL index, 22.5 s with this one (committing every 4096 keys, the
// SQL index fell to ~30 k keys/s already at 1e6). The price is ~13 bytes of RAM per stored key and
// a scan of the table on open; at most 2^32 rows.
//
// The store never begins or commits transactions: its owner (ExactSeenSet) decides whether a batch
// is its own transaction or part of a crawl checkpoint, because the same database also holds the
// frontier's tables. An index entry whose row was rolled back is harmless: its row id then holds
// no row or another URL, and the comparison rejects it.
//
// Thread-safety: none, like SqliteDb. The owner serializes all calls.
#ifndef URLSIEVE_BENCH_SUPPORT_EXACT_STORE_V1_H_
#define URLSIEVE_BENCH_SUPPORT_EXACT_STORE_V1_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "base/sqlite_db.h"
#include "base/status.h"

namespace urlsieve::bench {

class ExactStoreV1 {
 public:
  struct Entry {
    uint64_t hash;         // low 64 bits of HashKey(key)
    std::string_view key;  // the canonical URL
    // False only when the caller knows the key is not stored (the Bloom filter, which holds every
    // stored key, said "new"): the store then skips its lookup.
    bool maybe_present = true;
  };

  // Creates the table if it is missing, prepares the statements and loads the index; calls
  // on_row(key) for every stored key while doing so (null: skip). `db` must outlive the store.
  static Result<std::unique_ptr<ExactStoreV1>> Open(
      SqliteDb* db, const std::function<void(std::string_view key)>& on_row = nullptr);

  // Records every entry that is not yet stored. (*inserted)[i] is 1 when entries[i] was added (it
  // was new), 0 when the store already held it (or an earlier entry of this batch added it).
  // Entries are handled in (hash, position) order.
  Status InsertIfAbsent(std::span<const Entry> entries, std::vector<uint8_t>* inserted);

  // Is the key stored?
  Result<bool> Contains(uint64_t hash, std::string_view key);

  uint64_t rows() const { return rows_; }  // rows indexed (inserted or loaded)
  size_t index_bytes() const { return slots_.size() * sizeof(Slot); }

 private:
  struct Slot {
    uint32_t tag;  // hash bits 32..63
    uint32_t id;   // row id; 0 marks an empty slot (SQLite row ids start at 1)
  };

  ExactStoreV1(SqliteDb* db, SqliteStatement insert, SqliteStatement fetch)
      : db_(db), insert_(std::move(insert)), fetch_(std::move(fetch)) {}
  Result<bool> Lookup(uint64_t hash, std::string_view key);
  Status AddToIndex(uint64_t hash, int64_t id);
  void Place(Slot slot);
  static uint32_t Tag(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }

  SqliteDb* db_;
  SqliteStatement insert_;
  SqliteStatement fetch_;    // SELECT url ... WHERE id = ?
  std::vector<Slot> slots_;  // power-of-two size, linear probing, load <= 3/4
  uint64_t used_ = 0;
  uint64_t rows_ = 0;
  std::vector<std::pair<int64_t, uint32_t>> order_;  // reused between batches
};

}  // namespace urlsieve::bench

#endif  // URLSIEVE_BENCH_SUPPORT_EXACT_STORE_V1_H_
