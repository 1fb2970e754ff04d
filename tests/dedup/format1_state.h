// MakeFormat1ExactStore: turns an exact state made by this build into what the builds before the
// sharded exact store left (state format 2, or 1 without identity: the canonical URLs in state.db's
// `seen_urls(id, hash, url)`, hash = the low 64 bits of XXH3-128, no seen-NN.db, no exact_shards),
// for the migration tests. The Bloom files are left as they are: their format did not change.
// Thread-safety: none; one test thread, the state closed.
#ifndef URLSIEVE_TESTS_DEDUP_FORMAT1_STATE_H_
#define URLSIEVE_TESTS_DEDUP_FORMAT1_STATE_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/sqlite_db.h"
#include "dedup/exact_store.h"
#include "dedup/bloom/key_hash.h"

namespace urlsieve::testing {

inline void MakeFormat1ExactStore(const std::filesystem::path& dir,
                                  const std::vector<std::string>& canonical_keys) {
  auto db = SqliteDb::Open((dir / "state.db").string());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE((*db)->Exec("BEGIN; CREATE TABLE seen_urls(id INTEGER PRIMARY KEY, hash INTEGER NOT "
                          "NULL, url TEXT NOT NULL)")
                  .ok());
  auto insert = (*db)->Prepare("INSERT INTO seen_urls(hash, url) VALUES(?, ?)");
  ASSERT_TRUE(insert.ok());
  for (const std::string& key : canonical_keys) {
    ASSERT_TRUE(insert->BindInt64(1, static_cast<int64_t>(HashKey(key).low)).ok());
    ASSERT_TRUE(insert->BindText(2, key).ok());
    ASSERT_TRUE(insert->Run().ok());
  }
  insert = SqliteStatement();
  ASSERT_TRUE((*db)
                  ->Exec("DELETE FROM urlsieve_meta WHERE key = 'exact_shards';"
                         "UPDATE urlsieve_meta SET value = '2' WHERE key = 'version'; COMMIT")
                  .ok());
  for (uint32_t i = 0; i < ExactStore::kDefaultShards; ++i) {
    const std::string shard = ExactStore::ShardPath(dir.string(), i);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(shard + suffix);
  }
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_DEDUP_FORMAT1_STATE_H_
