// CrawlState: the crawl's state directory (OUT/state) and its checkpoints
// (docs/formats/state-directory.md, "State files and the checkpoint protocol"). It owns the
// directory (StateDir: the lock, the identity, state.db, the generation), the seen set, and the
// checkpoint gate, and runs the checkpoint protocol; the other parts of the crawl keep their
// durable rows in the same database and are given it only inside Restore() and Checkpoint():
//   - the seen set (a StateSeenSet, from the deployment's SeenSetSource, seen_set_source.h: the
//     state's own, a set shared in Redis, a cluster's; with the SeenFilter the crawler asks for
//     URLs);
//   - the frontier's pending set (Frontier::Checkpoint / Restore);
//   - the outputs' sizes and checksums and the crawl's counters (crawl_checkpoint.h);
//   - the fetch record of each URL fetched, for a re-crawl (fetch_record.h).
//
// Checkpoint protocol (invariants 2 and 4). A transaction on state.db is always open. Under the
// gate held exclusively (no fetcher is between a seen-insert and its page's Done()):
// write_parts(db) writes the frontier's delta, the rejections, the output marks and the counters
// into it; the seen set prepares its part (StateSeenSet::PrepareCheckpoint: the Bloom delta record
// or snapshot, its meta rows); the new generation is written and COMMITted; the seen set finishes
// (StateSeenSet::CheckpointCommitted: a snapshot's rename, a shared set's claims trimmed); the
// next transaction is begun. A crash at any point returns every part to the last committed
// generation together.
//
// The gate: a fetcher holds it shared from the moment it inserts a page's links into the seen set
// until the page's Done(), so a checkpoint never records a URL in the seen set that is not yet
// pending (nor a page in the outputs whose links are not).
//
// Thread-safety: Checkpoint() may be called from any thread (it takes the gate exclusively);
// Restore() before any fetcher runs. The seen set and filter are thread-safe (seen_set.h).
#ifndef URLSIEVE_CRAWLER_STATE_CRAWL_STATE_H_
#define URLSIEVE_CRAWLER_STATE_CRAWL_STATE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "crawler/state/seen_set_source.h"
#include "dedup/seen_filter.h"
#include "dedup/seen_set_params.h"
#include "dedup/state_seen_set.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

class SqliteDb;
class StateDir;

struct CrawlStateOptions {
  std::string dir;         // OUT/state; created if missing
  uint64_t capacity = 0;   // the seen set's, for a new state (an existing one keeps its own)
  double fp_rate = 0;      // ditto
  bool exact = false;      // ditto
  bool deletable = false;  // ditto: a counting Bloom filter (docs/features/forgetting.md,
                           // "Forgetting")
  CanonicalizeOptions canonicalize;  // ditto: the rules the seen set's keys are made with

  // As the parameters a new seen set is created with.
  StateParameters Requested() const;
};

class CrawlState {
 public:
  // Opens or creates the state with the seen set `source` opens: the errors of StateDir::Open (a
  // state in use by another process, a foreign, mixed-up or damaged state, ...), with every file
  // left as it was, and those of the source (e.g. FailedPrecondition for a set other than the one
  // the state records, naming the flags that resume it).
  static Result<std::unique_ptr<CrawlState>> Open(const CrawlStateOptions& options,
                                                  SeenSetSource& source);
  ~CrawlState();
  CrawlState(const CrawlState&) = delete;
  CrawlState& operator=(const CrawlState&) = delete;

  // The parts read what the last checkpoint recorded (before any fetcher runs).
  Status Restore(const std::function<Status(SqliteDb&)>& read_parts);
  // A checkpoint (see above): takes the gate exclusively, runs write_parts(db) in the open
  // transaction, then the seen set's part, and commits a new generation; then, the gate still held,
  // committed() (when given): what the parts wrote is durable, and nothing was added since.
  Status Checkpoint(const std::function<Status(SqliteDb&)>& write_parts,
                    const std::function<void()>& committed = {});

  // Held shared by a fetcher from seen-insert to Done(); exclusively by Checkpoint().
  std::shared_mutex& gate() { return gate_; }

  StateSeenSet& seen_set() { return *seen_set_; }
  // The URL-level calls over the seen set, with the canonicalizer options the state's keys are
  // made with (the stored ones).
  SeenFilter& seen() { return *seen_; }
  // Stored parameters in effect, a Bloom filter rebuilt, a state upgraded.
  const std::vector<SeenNotice>& notices() const { return notices_; }
  uint64_t generation() const;

  // A shared seen set: "the seen set 'NAME' at redis://host:port/db", for messages; "" when the
  // set is the state's own.
  const std::string& shared_seen_set() const { return shared_seen_set_; }
  // The claims (payloads given to InsertHashedIfNewClaiming) the shared set holds for keys it
  // told this crawl "new" after the last committed checkpoint, read at Open: URLs the crawl must
  // queue again. Empty for the local set.
  const std::vector<std::string>& uncommitted_claims() const { return uncommitted_claims_; }

 private:
  CrawlState() = default;

  std::vector<SeenNotice> notices_;
  std::string shared_seen_set_;
  std::vector<std::string> uncommitted_claims_;
  // Declared in this order so that the seen set is closed before the database and the lock.
  std::unique_ptr<StateDir> dir_;
  std::unique_ptr<StateSeenSet> seen_set_;
  std::unique_ptr<SeenFilter> seen_;
  std::shared_mutex gate_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_CRAWL_STATE_H_
