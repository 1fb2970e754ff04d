// CrawlState: the crawl's state directory (OUT/state) and its checkpoints (docs/design.md, "State
// files and the checkpoint protocol"). It owns the directory (StateDir: the lock, the identity,
// state.db, the generation), the seen set kept in it, and the checkpoint gate, and runs the
// checkpoint protocol; the other parts of the crawl keep their durable rows in the same database
// and are given it only inside Restore() and Checkpoint():
//   - the seen set (SeenSet, opened here, with the SeenFilter the crawler asks for URLs);
//   - the frontier's pending set (Frontier::Checkpoint / Restore);
//   - the outputs' sizes and checksums and the crawl's counters (crawl_checkpoint.h).
//
// Checkpoint protocol (invariants 2 and 4). A transaction on state.db is always open. Under the
// gate held exclusively (no fetcher is between a seen-insert and its page's Done()):
// write_parts(db) writes the frontier's delta, the rejections, the output marks and the counters
// into it; the seen set prepares its part (SeenSet::PrepareCheckpoint: the Bloom delta record or
// snapshot, its meta rows); the new generation is written and COMMITted; the seen set finishes
// (SeenSet::CheckpointCommitted: a snapshot's rename); the next transaction is begun. A crash at
// any point returns every part to the last committed generation together.
//
// The gate: a fetcher holds it shared from the moment it inserts a page's links into the seen set
// until the page's Done(), so a checkpoint never records a URL in the seen set that is not yet
// pending (nor a page in the outputs whose links are not).
//
// Thread-safety: Checkpoint() may be called from any thread (it takes the gate exclusively);
// Restore() before any fetcher runs. The seen set and filter are thread-safe (seen_set.h).
#ifndef URLSIEVE_CRAWLER_CRAWL_STATE_H_
#define URLSIEVE_CRAWLER_CRAWL_STATE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "dedup/seen_filter.h"
#include "dedup/seen_set.h"
#include "dedup/url_canonicalizer.h"

namespace urlsieve {

class SqliteDb;
class StateDir;

struct CrawlStateOptions {
  std::string dir;        // OUT/state; created if missing
  uint64_t capacity = 0;  // the seen set's, for a new state (an existing one keeps its own)
  double fp_rate = 0;     // ditto
  bool exact = false;     // ditto
  CanonicalizeOptions canonicalize;  // ditto: the rules the seen set's keys are made with
  bool rebuild_bloom = false;        // rebuild the Bloom filter from the exact store (--rebuild)
};

class CrawlState {
 public:
  // Opens or creates the state: the errors of SeenFilter::Open (a state in use by another
  // process, a foreign, mixed-up or damaged state, ...), with every file left as it was.
  static Result<std::unique_ptr<CrawlState>> Open(const CrawlStateOptions& options);
  ~CrawlState();
  CrawlState(const CrawlState&) = delete;
  CrawlState& operator=(const CrawlState&) = delete;

  // The parts read what the last checkpoint recorded (before any fetcher runs).
  Status Restore(const std::function<Status(SqliteDb&)>& read_parts);
  // A checkpoint (see above): takes the gate exclusively, runs write_parts(db) in the open
  // transaction, then the seen set's part, and commits a new generation.
  Status Checkpoint(const std::function<Status(SqliteDb&)>& write_parts);

  // Held shared by a fetcher from seen-insert to Done(); exclusively by Checkpoint().
  std::shared_mutex& gate() { return gate_; }

  SeenSet& seen_set() { return *seen_set_; }
  // The URL-level calls over the seen set, with the canonicalizer options the state's keys are
  // made with (the stored ones).
  SeenFilter& seen() { return *seen_; }
  // Stored parameters in effect, a Bloom filter rebuilt, a state upgraded.
  const std::vector<SeenNotice>& notices() const { return notices_; }
  uint64_t generation() const;

 private:
  CrawlState() = default;

  std::vector<SeenNotice> notices_;
  // Declared in this order so that the seen set is closed before the database and the lock.
  std::unique_ptr<StateDir> dir_;
  std::unique_ptr<SeenSet> seen_set_;
  std::unique_ptr<SeenFilter> seen_;
  std::shared_mutex gate_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_STATE_H_
