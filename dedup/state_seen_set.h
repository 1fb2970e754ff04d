// StateSeenSet: a SeenSet (seen_set.h) that a crawl's state owns, with the two things the crawl
// needs beyond the installed interface: checkpoints whose transaction the crawl owns, and claims.
// Internal (not installed): an embedder implements or calls SeenSet; the library's own sets
// (bloom_seen_set.h, exact_seen_set.h, generational_seen_set.h, redis_seen_set.h) are
// StateSeenSets, and CrawlState (crawler/state/crawl_state.h) drives them.
//
// Checkpoints. Inside the open transaction of the state database the owner calls
// PrepareCheckpoint(db, g), which records the set's part of generation g (rows of `db`, and
// whatever the set keeps outside it, written so that it only counts once `db` commits g); the
// owner COMMITs g; then it calls CheckpointCommitted(g), which makes the set's outside part
// current (e.g. renames a snapshot). A crash anywhere in between leaves the set, on its next open,
// at the last generation the database committed. If the COMMIT fails, nothing more is called: the
// next PrepareCheckpoint (of the same generation) prepares again everything since the last
// committed one. From PrepareCheckpoint to CheckpointCommitted the owner keeps inserts out
// (CrawlState's gate). Save() of a set whose checkpoints belong to an owner is
// FailedPrecondition.
//
// Claims, for a set shared beyond the crawl's own state (a Redis set opened for a crawl,
// redis_seen_set.h): the set's keys outlive a crash of the crawl, while the crawl's frontier
// returns to its last checkpoint, so a key told new after that checkpoint would be seen but never
// queued. Such a set stores payloads[i] (the crawl's record of the URL: its depth, its parent)
// with every key told new, in the same atomic step, and hands back, on the next open, the payloads
// of the keys told new after the last committed checkpoint (UncommittedClaims), for the crawl to
// queue again. A set whose keys roll back with the checkpoint (every local one) ignores the
// payloads, and has no uncommitted claims.
//
// Thread-safety: as SeenSet, except that the checkpoint calls exclude inserts (above).
#ifndef URLSIEVE_DEDUP_STATE_SEEN_SET_H_
#define URLSIEVE_DEDUP_STATE_SEEN_SET_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/seen_set.h"

namespace urlsieve {

class SqliteDb;

class StateSeenSet : public SeenSet {
 public:
  // Test-and-insert with claims (above); by default the plain insert, payloads ignored.
  virtual Status InsertHashedIfNewClaiming(std::span<const std::string_view> keys,
                                           std::span<const KeyHash> hashes,
                                           std::span<const std::string_view> payloads,
                                           std::span<bool> is_new) {
    (void)payloads;
    return InsertHashedIfNew(keys, hashes, is_new);
  }
  virtual Result<std::vector<std::string>> UncommittedClaims() const {
    return std::vector<std::string>();
  }

  // The set's part of checkpoint `generation`, inside the owner's open transaction on `db`.
  virtual Status PrepareCheckpoint(SqliteDb& db, uint64_t generation) = 0;
  // After the owner's COMMIT of `generation`. An error here (e.g. a rename that failed) leaves
  // the committed state intact; the next checkpoint repairs it.
  virtual Status CheckpointCommitted(uint64_t generation) = 0;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_STATE_SEEN_SET_H_
