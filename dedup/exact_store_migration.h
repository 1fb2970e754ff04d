// The migration of a format-1 exact store (state format 2 and older: table `seen_urls(id, hash,
// url)` in state.db, the canonical URL of every key) to the sharded store of 128-bit fingerprints
// (exact_store.h), done once by the first writable open (docs/features/exact-store.md, "The exact
// store").
//
// Crash-safe: the fingerprints are written to fresh shard files, committed and synced; then one
// state.db transaction drops seen_urls, records `exact_shards` and sets format version 3. A crash
// before that COMMIT leaves the format-1 store intact (the next open removes the partial shards,
// after checking they are this state's, and migrates again); after it, the new store is complete.
// Rows keep the state's generation; their first_seen is 0 (unknown: format 1 had no times).
//
// Thread-safety: none; called while the state is opened (its lock held exclusively).
#ifndef URLSIEVE_DEDUP_EXACT_STORE_MIGRATION_H_
#define URLSIEVE_DEDUP_EXACT_STORE_MIGRATION_H_

#include <cstdint>
#include <vector>

#include "base/sqlite_db.h"
#include "base/status.h"
#include "dedup/seen_set.h"

namespace urlsieve {

class StateDir;

// Does state.db hold a format-1 exact store (a seen_urls table)?
Result<bool> HasFormat1ExactStore(SqliteDb& db);

// FailedPrecondition: a read-only open cannot migrate; names the command that does.
Status Format1ReadOnlyError(const StateDir& dir);

// Migrates into `shards` shard files; returns the shard count recorded. Appends a kUpgraded
// notice. The state must be writable and have an identity (StateDir::Upgrade).
Result<uint64_t> MigrateFormat1ExactStore(StateDir* dir, uint32_t shards,
                                          std::vector<SeenNotice>* notices);

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_EXACT_STORE_MIGRATION_H_
