// ExactStore: the exact, durable record of seen canonical URLs, one row per key in SQLite.
//
// Table `seen_urls(hash INTEGER, url TEXT, PRIMARY KEY(hash, url)) WITHOUT ROWID`, where hash is
// the low 64 bits of the key's XXH3-128 (as a signed int64). A lookup is one probe of the
// primary-key B-tree that also compares the full canonical URL, so answers are exact even when two
// keys share a 64-bit hash. The Bloom filter in front of it only decides when the probe is needed.
//
// The store never begins or commits transactions: its owner (SeenFilter) decides whether each batch
// is its own transaction or part of a crawl checkpoint, because the same database also holds the
// frontier's tables. Batches are probed in (hash, position) order so the B-tree is walked once,
// left to right, and the first occurrence of a key repeated within a batch is the one inserted.
//
// Thread-safety: none, like SqliteDb. The owner serializes all calls.
#ifndef URLSIEVE_DEDUP_EXACT_STORE_H_
#define URLSIEVE_DEDUP_EXACT_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "dedup/sqlite_db.h"
#include "dedup/status.h"

namespace urlsieve {

class ExactStore {
 public:
  struct Entry {
    uint64_t hash;         // low 64 bits of HashKey(key)
    std::string_view key;  // the canonical URL
    // False only when the caller knows the key is not stored (the Bloom filter, which holds every
    // stored key, said "new"); a hint that lets the store skip its lookup.
    bool maybe_present = true;
  };

  // Creates the table if it is missing and prepares the statements. `db` must outlive the store.
  static Result<std::unique_ptr<ExactStore>> Open(SqliteDb* db);

  // Records every entry that is not yet stored. (*inserted)[i] is 1 when entries[i] was added (it
  // was new), 0 when the store already held it (or an earlier entry of this batch added it).
  Status InsertIfAbsent(std::span<const Entry> entries, std::vector<uint8_t>* inserted);

  // Is the key stored? (one index probe).
  Result<bool> Contains(uint64_t hash, std::string_view key);

  // Calls fn(key) for every stored key, in B-tree order (used to rebuild the Bloom filter).
  Status ForEachKey(const std::function<void(std::string_view key)>& fn);

  // Counts the rows (a full scan: for stats and tests, not for the hot path).
  Result<uint64_t> CountRows();

 private:
  Result<bool> Lookup(int64_t hash, std::string_view key);

  ExactStore(SqliteDb* db, SqliteStatement insert, SqliteStatement lookup)
      : db_(db), insert_(std::move(insert)), lookup_(std::move(lookup)) {}

  SqliteDb* db_;
  SqliteStatement insert_;
  SqliteStatement lookup_;
  std::vector<std::pair<int64_t, uint32_t>> order_;  // reused between batches
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_EXACT_STORE_H_
